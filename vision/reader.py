"""Find the dice in a frame of the tray and read the top face of each.

Stages, each sized by the dice found rather than by a fixed pixel count:
1. foreground: the frame at a reduced working resolution is compared with a smooth background
   (a coarse median of the frame itself), by colour difference and by edge strength, so white dice on
   a light tray still show through their outline and pips;
2. dice: blobs the size of one die are taken as they are; blobs several dice large (dice touching)
   are split by clustering their pixels on position and colour; the die size is the median size of the
   blobs that look like a single square;
3. faces: each die is cut out of the full-resolution frame, turned upright and scaled to a fixed
   size; pips are the blobs that differ from the face's own colour, in either direction, so light pips
   on dark dice count as well as dark on light; a real face has a centrally symmetric layout;
4. a learned face classifier (vision.face_classifier), when its model is installed, checks every face;
   the value is trusted when both agree, or when one is sure and the other has no opinion.
Anything doubtful makes the whole reading "unsure" with a reason, never a confident wrong value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from .reading import Die, Reading

MIN_SIDE, MAX_SIDE = 320, 4096
# Detection runs on a copy whose longer side is this long: dice of a Yacht tray stay > 20 px there.
WORKING_SIDE = 640
# Each face is analysed as a square of this many pixels, whatever its size in the frame.
FACE_PX = 40
# Below this a face is too small to show its pips at all.
MIN_DIE_PX = 10


@dataclass(frozen=True)
class FaceRead:
    """What the pip analysis saw on one face."""

    value: int | None
    confidence: float
    pip_count: int
    contrast: float
    symmetry_error: float


@dataclass(frozen=True)
class Candidate:
    """A blob that may be one die, in full-resolution pixels."""

    box: tuple[tuple[float, float], tuple[float, float], float]
    fill: float


def as_bgr(image: np.ndarray) -> np.ndarray:
    """The frame as 3-channel uint8, or a ValueError saying what is wrong with it."""
    if not isinstance(image, np.ndarray):
        raise ValueError(f"image must be a numpy array, got {type(image).__name__}")
    if image.dtype != np.uint8:
        raise ValueError(f"image must be 8-bit (uint8), got {image.dtype}")
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    elif image.ndim == 3 and image.shape[2] == 4:
        image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    elif not (image.ndim == 3 and image.shape[2] == 3):
        raise ValueError(f"image must be grey, BGR or BGRA, got shape {image.shape}")
    height, width = image.shape[:2]
    if min(height, width) < MIN_SIDE // 2 or max(height, width) < MIN_SIDE or max(height, width) > MAX_SIDE:
        raise ValueError(
            f"image is {width}x{height}; the reader takes frames from {MIN_SIDE} to {MAX_SIDE} px wide"
        )
    return image


def _colour_distance(lab: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """Per pixel, from one Lab colour: lightness difference plus twice the chroma difference (chroma
    is what separates a red die from a grey tray of the same brightness)."""
    # As an OpenCV scalar: filling an image-sized array with the colour would cost 5 times as much.
    diff = cv2.absdiff(lab, (*colour.tolist(), 0))
    lightness, green_red, blue_yellow = cv2.split(diff)
    return cv2.add(cv2.add(lightness.astype(np.uint16), green_red.astype(np.uint16) * 2),
                   blue_yellow.astype(np.uint16) * 2)


def foreground_mask(lab: np.ndarray) -> np.ndarray:
    """1 where something stands out from the tray floor (a die, a hand), 0 elsewhere, in the working
    frame converted to Lab (once, by the caller, who needs it too)."""
    height, width = lab.shape[:2]
    # A median over windows of ~1/4 of the frame: wider than a cluster of dice or a hand, narrow enough
    # to follow uneven light across the tray.
    coarse = cv2.resize(lab, (max(width // 32, 8), max(height // 32, 8)), interpolation=cv2.INTER_AREA)
    background = cv2.resize(cv2.medianBlur(coarse, 5), (width, height), interpolation=cv2.INTER_LINEAR)
    lightness, background_lightness = lab[..., 0], background[..., 0]
    lightness_change = cv2.absdiff(lightness, background_lightness)
    diff = cv2.absdiff(lab, background)
    chroma_change = cv2.add(diff[..., 1], diff[..., 2])
    smooth = cv2.GaussianBlur(lightness, (3, 3), 0)
    gradient = cv2.magnitude(cv2.Sobel(smooth, cv2.CV_32F, 1, 0), cv2.Sobel(smooth, cv2.CV_32F, 0, 1))
    # Thresholds follow the frame's own noise, measured over the (mostly empty) tray.
    sample = (slice(None, None, 4), slice(None, None, 4))
    chroma_cut = max(12.0, 4.0 * (float(np.median(chroma_change[sample])) + 1.0))
    change_cut = max(30.0, 5.0 * (float(np.median(lightness_change[sample])) + 1.0))
    edge_cut = max(60.0, 6.0 * float(np.median(gradient[sample])) + 1.0)
    differs = (lightness_change > 2 * change_cut) | (chroma_change > chroma_cut * 1.5)
    round3 = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3))
    edges = cv2.morphologyEx((gradient > edge_cut).astype(np.uint8), cv2.MORPH_CLOSE, round3)
    # White dice on a light tray differ little in colour, but their outline is sharp and closed.
    outlined = _fill_small_holes(edges, max_hole=height * width // 30).astype(bool)
    mask = (differs | outlined).astype(np.uint8)
    # Only the few pixels that stand out need the (costlier) shadow test.
    standing_out = np.flatnonzero(mask)
    in_shadow = _shadow(np.take(lab.reshape(-1, 3), standing_out, axis=0),
                        np.take(background.reshape(-1, 3), standing_out, axis=0), chroma_cut)
    mask.reshape(-1)[standing_out[in_shadow]] = 0
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, round3)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)))
    mask = _fill_small_holes(mask, max_hole=height * width // 30)
    return mask & _tray_floor(mask)


def _shadow(lab: np.ndarray, background: np.ndarray, tolerance: float) -> np.ndarray:
    """Per pixel (N x 3 Lab arrays): True where it is the tray in shadow: darker (but not black: a
    black die is much darker) with the tray's hue, its chroma shrunk with its lightness rather than
    turned another way."""
    lightness = lab[..., 0].astype(np.float32)
    floor_lightness = background[..., 0].astype(np.float32) + 1.0
    ratio = lightness / floor_lightness
    shadow = (ratio < 1.0) & (ratio > 0.35)
    # The chroma test only for pixels dark enough, one channel at a time (a strided sum over the
    # last axis is several times slower).
    dark = np.flatnonzero(shadow)
    green_red, blue_yellow = (lab[dark, channel].astype(np.float32) - 128.0 for channel in (1, 2))
    floor_green_red, floor_blue_yellow = (background[dark, channel].astype(np.float32) - 128.0 for channel in (1, 2))
    along = (green_red * floor_green_red + blue_yellow * floor_blue_yellow) / (
        floor_green_red * floor_green_red + floor_blue_yellow * floor_blue_yellow + 1.0)
    along = np.clip(along, 0.3, 1.1)
    residual = np.abs(green_red - along * floor_green_red) + np.abs(blue_yellow - along * floor_blue_yellow)
    shadow[dark] = residual < tolerance
    return shadow


def _tray_floor(mask: np.ndarray) -> np.ndarray:
    """The convex hull of the tray floor, the largest empty region: without the walls and whatever
    lies outside the tray. A die against a wall sits in a bay of the floor, which the hull takes in.
    When the floor fills the view, or the world outside the tray is larger, the hull is the frame."""
    # Eroded first, so a gap in a wall's outline does not join the floor to the world outside.
    empty = cv2.erode(1 - mask, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (9, 9)))
    labels, areas = _components(empty)
    floor = np.ones_like(mask)
    if len(areas) < 2:
        return floor
    largest = 1 + int(np.argmax(areas[1:]))
    contours, _ = cv2.findContours((labels == largest).astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    floor[:] = 0
    cv2.fillConvexPoly(floor, cv2.convexHull(np.vstack(contours)), 1)
    return floor


def _fill_small_holes(mask: np.ndarray, max_hole: int) -> np.ndarray:
    """Fill enclosed regions smaller than max_hole (a die's face inside its outline, a pip), but not
    the tray inside its walls."""
    labels, areas = _components(1 - mask)
    # Label 0 is the mask itself, which stays set.
    keep = (areas < max_hole).astype(mask.dtype)
    keep[0] = 1
    return np.take(keep, labels)


def _components(binary: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """4-connected labels of a 0/1 image and each label's pixel count. Counting with bincount is
    a few times cheaper than OpenCV's per-component statistics, of which only the area is needed."""
    count, labels = cv2.connectedComponents(binary, connectivity=4)
    return labels, np.bincount(labels.ravel(), minlength=count)


@dataclass(frozen=True)
class Blob:
    contour: np.ndarray
    area: float
    rect: tuple[tuple[float, float], tuple[float, float], float]

    @property
    def fill(self) -> float:
        (w, h) = self.rect[1]
        return self.area / max(w * h, 1.0)

    @property
    def aspect(self) -> float:
        (w, h) = self.rect[1]
        return max(w, h) / max(min(w, h), 1.0)

    @property
    def looks_like_one_die(self) -> bool:
        return self.fill > 0.75 and self.aspect < 1.4


def find_blobs(mask: np.ndarray, min_area: float) -> list[Blob]:
    """Connected parts of the mask; a blob's area leaves out its holes (the tray inside its walls)."""
    contours, hierarchy = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    if hierarchy is None:
        return []
    areas = [cv2.contourArea(c) for c in contours]
    net = {i: areas[i] for i, h in enumerate(hierarchy[0]) if h[3] < 0}
    for i, h in enumerate(hierarchy[0]):
        if h[3] >= 0:
            net[h[3]] -= areas[i]
    return [Blob(contours[i], area, cv2.minAreaRect(contours[i])) for i, area in net.items() if area >= min_area]


def _solid(blob: Blob) -> tuple[np.ndarray, np.ndarray]:
    """The blob filled in on a mask just around it (with a 1 px empty border), and that mask's
    top-left corner in the blob's coordinates."""
    x, y, w, h = cv2.boundingRect(blob.contour)
    origin = np.array([x - 1, y - 1])
    solid = np.zeros((h + 2, w + 2), np.uint8)
    cv2.drawContours(solid, [blob.contour - origin], 0, 1, cv2.FILLED)
    return solid, origin


def cut_at_necks(blob: Blob) -> list[Blob]:
    """A blob opened by 60 % of its widest part, in its separate pieces: a die joined to a strip of
    wall or a fringe of shadow by something narrower than itself comes apart from it (an opening by
    that much keeps a square of the widest part's width whole but for its corners)."""
    solid, origin = _solid(blob)
    widest = 2.0 * float(cv2.distanceTransform(solid, cv2.DIST_L2, 3).max())
    width = max(3, round(0.6 * widest) | 1)
    opened = cv2.morphologyEx(solid, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (width, width)))
    contours, _ = cv2.findContours(opened, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    pieces = [contour + origin for contour in contours]
    return [Blob(piece, cv2.contourArea(piece), cv2.minAreaRect(piece)) for piece in pieces]


def _cut_off_faces(frame: np.ndarray, blob: Blob, scale: float) -> list[Blob]:
    """The blob in pieces (cut_at_necks) when one of them is a die, one whose top face of its own
    size shows there; otherwise the blob whole: a square cut out of a wall or a shadow's fringe is
    no die, and must not set the die size."""
    if blob.looks_like_one_die:
        return [blob]
    pieces = cut_at_necks(blob)
    for piece in pieces:
        if not piece.looks_like_one_die:
            continue
        (cx, cy), (w, h), angle = piece.rect
        face = refine_box(frame, ((cx / scale, cy / scale), (w / scale, h / scale), angle))
        side = math.sqrt(piece.area) / scale
        if face is not None and 0.7 * side <= min(face[1]) and max(face[1]) <= 1.3 * side:
            return pieces
    return [blob]


def estimate_die_side(blobs: list[Blob]) -> float | None:
    """Median side of the blobs that look like one die: the scale everything else is measured in."""
    sides = [math.sqrt(b.area) for b in blobs if b.looks_like_one_die]
    if not sides:
        return None
    # With touching pairs the smallest square blobs are the best guess; the median of the lower
    # half resists a few pairs that happen to look square.
    sides.sort()
    return float(np.median(sides[: max(1, (len(sides) + 1) // 2 + len(sides) // 4)]))


def split_blob(blob: Blob, lab: np.ndarray, side: float, count: int) -> list[Blob]:
    """Touching dice: cluster the blob's pixels on position and colour into `count` parts."""
    x, y, w, h = cv2.boundingRect(blob.contour)
    local = np.zeros((h, w), np.uint8)
    cv2.drawContours(local, [blob.contour - np.array([x, y])], 0, 1, cv2.FILLED)
    ys, xs = np.nonzero(local)
    colours = lab[ys + y, xs + x].astype(np.float32)
    # Colour weighs about as much as a quarter of a die side: two dice of different colours part
    # along their colour border, two alike part by position.
    features = np.column_stack([xs, ys, colours * (0.25 * side / 60.0)]).astype(np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 15, 0.5)
    cv2.setRNGSeed(1)
    # Clustering a third of the pixels finds the same centres at a third of the cost.
    _, _, centres = cv2.kmeans(features[::3].copy(), count, None, criteria, 2, cv2.KMEANS_PP_CENTERS)
    labels = np.argmin(((features[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2), axis=1)
    parts = []
    for index in range(count):
        part = np.zeros((h, w), np.uint8)
        part[ys[labels == index], xs[labels == index]] = 1
        part = cv2.morphologyEx(part, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        contours, _ = cv2.findContours(part, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        if not contours:
            continue
        contour = max(contours, key=cv2.contourArea) + np.array([x, y])
        parts.append(Blob(contour, cv2.contourArea(contour), cv2.minAreaRect(contour)))
    return parts


def _pip_blobs(face_lab: np.ndarray) -> tuple[list[tuple[float, float, float]], float]:
    """The pips on an upright face crop, (x, y, area) each, and the colour cut that separated them:
    the holes in the face region. Whatever touches the crop's edge is no hole."""
    face, cut = _face_region(face_lab)
    count, _, stats, centroids = cv2.connectedComponentsWithStats(1 - face, connectivity=4)
    found = []
    for index in range(1, count):
        x, y, w, h, area = stats[index]
        if x <= 0 or y <= 0 or x + w >= FACE_PX or y + h >= FACE_PX:
            continue
        if max(w, h) > 2.2 * min(w, h) or area < 0.4 * w * h:
            continue  # a streak or a ring, not a round pip
        cx, cy = centroids[index]
        found.append((float(cx), float(cy), float(area)))
    # A pip is 12 to 25 % of the die's side across: about 1 to 8 % of the crop's area. Marbling and
    # grain leave smaller holes; all pips of a face are one size, so holes far smaller than the
    # largest are not pips.
    crop_area = FACE_PX * FACE_PX
    pips = [pip for pip in found if 0.01 * crop_area <= pip[2] <= 0.08 * crop_area]
    if pips:
        largest = max(area for _, _, area in pips)
        pips = [pip for pip in pips if pip[2] >= 0.4 * largest]
    return pips, cut


def _face_region(lab: np.ndarray, cut_floor: float = 40.0, cut_share: float = 1.0) -> tuple[np.ndarray, float]:
    """In a square crop centred on a face: 1 on the face (pips included), and the colour cut used.

    The face is the part of the face's own colour that covers the middle of the crop; its holes are
    the pips. Side faces are shaded differently and tray, shadow and neighbours differ in colour.
    """
    size = lab.shape[0]
    quarter = size // 4
    middle = lab[quarter:-quarter, quarter:-quarter]
    face_colour = np.median(middle.reshape(-1, 3), axis=0).astype(np.uint8)
    difference = np.minimum(_colour_distance(lab, face_colour), 255).astype(np.uint8)
    inset = size // 7
    otsu, _ = cv2.threshold(difference[inset:-inset, inset:-inset], 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    cut = max(float(otsu) * cut_share, cut_floor)
    same = (difference <= cut).astype(np.uint8)
    count, labels = cv2.connectedComponents(same, connectivity=8)
    votes = np.bincount(labels[quarter:-quarter, quarter:-quarter].ravel(), minlength=count)
    votes[0] = 0
    face = (labels == int(np.argmax(votes))).astype(np.uint8)
    return face, cut


SIDE_FACE_CUT = 0.6


def refine_box(frame: np.ndarray, box) -> tuple[tuple[float, float], tuple[float, float], float] | None:
    """The top face's own rectangle, found around a blob's box (which may include a side face, a
    shadow or the edge of a neighbour); None when no square face shows there."""
    (cx, cy), (w, h), _ = box
    span = 1.4 * max(w, h)
    size = 48
    window = cv2.getRectSubPix(frame, (max(int(span), 4),) * 2, (cx, cy))
    window = cv2.resize(window, (size, size), interpolation=cv2.INTER_AREA)
    # A tighter colour cut than for pips: the side faces, shaded a little darker, stay out.
    face, _ = _face_region(cv2.cvtColor(window, cv2.COLOR_BGR2LAB), cut_share=SIDE_FACE_CUT)
    face = _fill_small_holes(face, max_hole=size * size // 4)
    face = cv2.morphologyEx(face, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)))
    contours, _ = cv2.findContours(face, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    contour = max(contours, key=cv2.contourArea)
    (fx, fy), (fw, fh), angle = cv2.minAreaRect(contour)
    if min(fw, fh) < 0.2 * size or max(fw, fh) > 1.35 * min(fw, fh):
        return None
    if cv2.contourArea(contour) < 0.82 * fw * fh:
        return None  # round (a screw head, a coin, a pip) or ragged: a die's face fills its square
    k = max(int(span), 4) / size
    origin_x = cx - (max(int(span), 4) - 1) / 2.0
    origin_y = cy - (max(int(span), 4) - 1) / 2.0
    # +0.5 pixel centres: resize maps pixel centres, not corners
    return (((fx + 0.5) * k - 0.5 + origin_x, (fy + 0.5) * k - 0.5 + origin_y), (fw * k, fh * k), angle)


def _symmetry_error(pips: list[tuple[float, float, float]]) -> float:
    """Every pip layout of a die maps onto itself under a half turn about the face centre, which is
    also the pips' mean. The largest distance from a pip's mirror image to the nearest pip, as a
    fraction of the crop side. The face centre is not assumed to be the crop centre: seen at a slant,
    the die's blob takes in a side face too."""
    points = np.array([(x, y) for x, y, _ in pips], np.float32)
    mean = points.mean(axis=0)
    centred = points - mean
    distances = np.linalg.norm(-centred[:, None, :] - centred[None, :, :], axis=2)
    if len(pips) > 1:
        return float(distances.min(axis=1).max()) / FACE_PX
    # A lone spot must sit in the middle of the face: off-centre it is a glint or a chip, not a 1.
    return float(np.linalg.norm(mean - (FACE_PX - 1) / 2.0)) * 0.5 / FACE_PX


def read_face(face_bgr: np.ndarray) -> FaceRead:
    """Count the pips on one upright FACE_PX x FACE_PX face crop."""
    face_lab = cv2.cvtColor(face_bgr, cv2.COLOR_BGR2LAB)
    pips, cut = _pip_blobs(face_lab)
    if not 1 <= len(pips) <= 6:
        return FaceRead(None, 0.0, len(pips), cut, 1.0)
    error = _symmetry_error(pips)
    areas = [area for _, _, area in pips]
    even_sizes = max(areas) <= 3.0 * min(areas)
    confidence = max(0.0, 1.0 - error / 0.15) * (1.0 if even_sizes else 0.5)
    value = len(pips) if confidence >= 0.4 else None
    return FaceRead(value, round(confidence, 3), len(pips), cut, error)


@dataclass(frozen=True)
class DieSpot:
    """A place in the frame that holds one die, before its face is read."""

    box: tuple[tuple[float, float], tuple[float, float], float]
    problem: str | None = None


def find_dice(frame: np.ndarray) -> tuple[list[DieSpot], list[str]]:
    """Where the dice are (full-resolution boxes) and what in the frame is not a die but matters."""
    height, width = frame.shape[:2]
    scale = min(1.0, WORKING_SIDE / max(height, width))
    work = frame if scale == 1.0 else cv2.resize(
        frame, (round(width * scale), round(height * scale)), interpolation=cv2.INTER_AREA
    )
    lab = cv2.cvtColor(work, cv2.COLOR_BGR2LAB)
    mask = foreground_mask(lab)
    min_area = (MIN_DIE_PX * scale) ** 2
    blobs = find_blobs(mask, min_area)
    side = estimate_die_side(blobs)
    if side is None:
        # No blob looks like one lone die: perhaps every die is joined to a wall or a neighbour by
        # something narrower than itself.
        blobs = [piece for blob in blobs for piece in _cut_off_faces(frame, blob, scale) if piece.area >= min_area]
        side = estimate_die_side(blobs)
    if side is None:
        # No blob looks like one lone die (they all touch): the smallest solid blob bounds the size
        # from above, so what follows errs towards "odd-shaped, unsure" rather than "no dice".
        solid = [math.sqrt(b.area) for b in blobs if b.fill > 0.5 and b.aspect < 2.5]
        side = min(solid) if solid else None
    problems: list[str] = []
    if side is None:
        if any(_is_large(b, 4 * MIN_DIE_PX * scale) for b in blobs):
            problems.append(LARGE_THING)
        elif any(not _is_thin(b, 2 * MIN_DIE_PX * scale) for b in blobs):
            # Something die-sized stands out but nothing has a die's shape: a die against a wall,
            # a die in shadow. Saying "no dice" here could be wrong, so say what is known.
            problems.append(SHAPELESS)
        return [], problems
    spots: list[tuple[Blob, str]] = []
    hints: list[Blob] = []
    for blob in blobs:
        if _is_large(blob, side):
            problems.append(LARGE_THING)
            continue
        dice_worth = blob.area / (side * side)
        if dice_worth < 0.3 and max(blob.rect[1]) < side:
            # Only the pips of a white die on a light tray may stand out: look for a face around them.
            if dice_worth >= 0.05:
                hints.append(blob)
            continue
        if _is_thin(blob, side) or dice_worth < 0.3 or (blob.fill < 0.3 and max(blob.rect[1]) > 3 * side):
            continue  # a wall's edge or corner, a crack, a crumb
        if dice_worth <= 1.6 or blob.fill < 0.3:
            spots.append((blob, ODD_SHAPE))
        else:
            for part in split_blob(blob, lab, side, round(dice_worth)):
                if math.sqrt(part.area) >= 0.6 * side:
                    spots.append((part, UNSEPARATED))
    result: list[DieSpot] = []
    # Two dice lying flat cannot have centres closer than most of a side: a second spot that near is
    # the same die found twice (a blob part and the face refined from its neighbour, a pip hint).
    min_gap = 0.7 * side / scale

    def add(spot: DieSpot) -> None:
        if not any(math.dist(spot.box[0], known.box[0]) < min_gap for known in result):
            result.append(spot)

    for blob, problem in spots:
        (cx, cy), (w, h), angle = blob.rect
        box = ((cx / scale, cy / scale), (w / scale, h / scale), angle)
        face = refine_box(frame, box)
        if face is not None and 0.6 * side / scale <= min(face[1]) and max(face[1]) <= 1.5 * side / scale:
            # A square top face of a die's size shows, whatever the blob's shape (a side face seen
            # at a slant, a neighbour's edge): the face is what counts.
            add(DieSpot(face, None))
        elif blob.looks_like_one_die and problem == ODD_SHAPE:
            add(DieSpot(box, None))
        else:
            add(DieSpot(box, problem))
    for hint in hints:
        (cx, cy) = hint.rect[0]
        face = refine_box(frame, ((cx / scale, cy / scale), (side / scale, side / scale), 0.0))
        if face is not None and 0.7 * side / scale <= min(face[1]) and max(face[1]) <= 1.4 * side / scale:
            add(DieSpot(face, None))
    return result, problems


ODD_SHAPE = "a die is tilted or odd-shaped (cocked against a wall or another die?)"
UNSEPARATED = "touching dice could not be told apart"
SHAPELESS = "something stands out from the tray but has no die's shape"
LARGE_THING = "something larger than a die is in the tray (a hand?)"


def _is_thin(blob: Blob, side: float) -> bool:
    """What is left of tray walls and their edges after the floor is cut out: long and thin."""
    return min(blob.rect[1]) < 0.6 * side


def _is_large(blob: Blob, side: float) -> bool:
    """Too much for a few touching dice: a hand, an arm, a cup; not the hollow corner of a wall, nor
    a die against a wall strip. Parts narrower than a die (strips of wall, fringes) are opened away
    first: what is left must be solid stuff of more than the five dice of a game."""
    if _is_thin(blob, side) or blob.fill < 0.25 or blob.area <= 6 * side * side:
        return False
    solid, _ = _solid(blob)
    width = max(3, round(0.7 * side) | 1)
    solid = cv2.morphologyEx(solid, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (width, width)))
    return int(solid.sum()) > 6 * side * side


# How the pip count and the learned classifier are combined, measured on the detected dice of the
# byler-d6 train split (1380 matched to a label) and samples/ (189), with the model of commit 9da104b:
# - the pip count alone gives a value to 1009 byler dice, 166 of them wrong (marbled dice, tiny pips,
#   glints taken for pips): not safe on its own on real photos; on samples/ 3 wrong of 164;
# - both agreeing, with the classifier at >= 0.5: 789 values, 8 wrong (byler); 161, 0 wrong (samples);
# - the classifier alone at >= 0.95 adds 113 values on byler, 1 wrong, and 2 on samples, 0 wrong
#   (at >= 0.9: 169 more on byler, 5 wrong).
# (The classifier was trained on the byler train split, so its figures there are optimistic; the test
# split figures in the README are the honest ones.)
AGREEMENT_MIN = 0.5
CLASSIFIER_ALONE = 0.95
# An odd-shaped blob without pips is not a die when the classifier is this sure it shows no face
# (0.75 and 0.8 measure the same on samples/ and byler train; 0.6 let a die go unseen).
NOT_A_FACE_MIN = 0.75
# An odd-shaped blob (touching dice, a side face in view) is read without doubt when the pip count
# (sure of its layout) and the classifier agree on its face, the classifier this surely.
SHAPE_DOUBT_CLEARED = 0.6
# Without the classifier the pip count is trusted when its own layout check is this sure.
MIN_CONFIDENCE = 0.5


def prepare() -> None:
    """Do the one-time set-up now, so the first frame read is not slowed by it: OpenCV builds its
    Lab conversion tables on first use (half a second here) and the classifier loads its network.
    For a camera loop or a command that times its readings."""
    cv2.cvtColor(np.zeros((2, 2, 3), np.uint8), cv2.COLOR_BGR2LAB)
    classifier = _face_classifier()
    if classifier is not None:
        from .face_classifier import CROP_SIZE

        classifier.logits(np.zeros((1, 3, CROP_SIZE, CROP_SIZE), np.float32))


def _face_classifier():
    from . import face_classifier

    return face_classifier.default_classifier() if face_classifier.MODEL_PATH.is_file() else None


def combine(classical: FaceRead, learned: tuple[int | None, float] | None) -> tuple[int | None, float]:
    """One value and confidence from the pip count and (when installed) the classifier."""
    if learned is None:
        return classical.value, classical.confidence
    learned_value, learned_confidence = learned
    if classical.value is not None and learned_value == classical.value and learned_confidence >= AGREEMENT_MIN:
        return classical.value, 1.0 - (1.0 - classical.confidence) * (1.0 - learned_confidence)
    if learned_value is not None and learned_confidence >= CLASSIFIER_ALONE:
        return learned_value, learned_confidence
    return None, 0.0


def read_dice(image: np.ndarray, use_classifier: bool = True) -> Reading:
    """Read every die in a BGR frame of the tray. A ValueError says what is wrong with a bad image."""
    frame = as_bgr(image)
    spots, problems = find_dice(frame)
    boxes = [spot.box for spot in spots]
    dice: list[Die] = []
    if boxes:
        from .face_classifier import crop_faces

        # The face is cut a little inside the blob's box: the box takes in the die's rim and shading.
        faces = crop_faces(frame, boxes, size=FACE_PX, margin=0.88)
        classifier = _face_classifier() if use_classifier else None
        learned = classifier.classify(frame, boxes) if classifier is not None else [None] * len(boxes)
        for spot, face, opinion in zip(spots, faces, learned):
            classical = read_face(face)
            no_face = opinion is not None and opinion[0] is None
            if classical.pip_count == 0 and (
                    (spot.problem is None and (opinion is None or no_face))
                    or (no_face and opinion[1] >= NOT_A_FACE_MIN)):
                # Every face has a pip: a blob without any is a screw head, a wall's corner, a crumb.
                # An odd-shaped one is let go only when the classifier, too, is sure it is no face.
                continue
            value, confidence = combine(classical, opinion)
            (cx, cy), (w, h), angle = spot.box
            dice.append(Die(value, cx, cy, max(math.sqrt(w * h), 1.0), angle, round(min(max(confidence, 0.0), 1.0), 3)))
            shape_doubt_cleared = (opinion is not None and opinion[0] == classical.value
                                   and opinion[1] >= SHAPE_DOUBT_CLEARED and classical.confidence >= 0.8)
            if spot.problem is not None and not shape_doubt_cleared:
                problems.append(spot.problem)
            elif value is None:
                problems.append(f"the die at ({cx:.0f}, {cy:.0f}) could not be read")
            elif confidence < MIN_CONFIDENCE:
                problems.append(f"the die at ({cx:.0f}, {cy:.0f}) looks like {value} but not surely")
    dice.sort(key=lambda d: (d.y, d.x))
    unique = tuple(dict.fromkeys(problems))
    return Reading(tuple(dice), "unsure" if unique else "ok", unique)
