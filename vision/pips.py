"""The classical half of reading a face: its outline by its own colour, and its pips counted.

A face is the region of the face's own colour covering the middle of a crop round it (side faces are
shaded differently; tray, shadow and neighbours differ in colour); its pips are the holes in that
region, of one size, in a centrally symmetric layout. The reader uses the outline to square each face
up, and the pip count as a second opinion where the learned classifier is not sure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import cv2
import numpy as np

from .face_classifier import FaceBox
from .imaging import frame_window, shrink

# Each face is analysed as a square of this many pixels, whatever its size in the frame.
FACE_PX = 40


@dataclass(frozen=True)
class FaceRead:
    """What the pip count saw on one face."""

    value: int | None
    confidence: float
    pip_count: int
    contrast: float
    symmetry_error: float


# Lightness difference plus twice each chroma difference: chroma is what separates a red die from a
# grey tray of the same brightness.
_DISTANCE_WEIGHTS = np.array([[1.0, 2.0, 2.0]], np.float32)


def _colour_distance(lab: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """Per pixel, the distance from one Lab colour (_DISTANCE_WEIGHTS), saturating at 255."""
    # The colour as an OpenCV scalar: filling an image-sized array with it would cost 5 times as much.
    return cv2.transform(cv2.absdiff(lab, (*colour.tolist(), 0)), _DISTANCE_WEIGHTS)  # type: ignore[call-overload]


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
    large = [pip for pip in found if 0.08 * crop_area < pip[2] <= 0.16 * crop_area]
    if not pips and len(large) == 1:
        # The pip of a one is often made larger than the others, up to about 45 % of the side across.
        pips = large
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
    pixels = middle.reshape(-1, 3)
    # The (upper) median colour by partial sort: np.median costs several times more on so few pixels.
    face_colour = np.partition(pixels, len(pixels) // 2, axis=0)[len(pixels) // 2]
    difference = _colour_distance(lab, face_colour)
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
# A disc is looked for again in a window this much wider, at the same scale (is_wide_disc): 2.1 widths of
# the detector's box, room for a disc the detector sized at 0.7 of its width (byler-d6's screw heads, found
# so by networks that never saw them). At the window's usual 48 px a die's rounded corners look round.
WIDE_DISC_LOOK = 1.5


# Outlines are found in a square of this many pixels round the detected die, whatever its size.
BLOB_PX = 48
# A die's face fills at least this share of its rectangle; a disc fills pi/4 (0.79) of its square.
SQUARE_FILL = 0.82


class Blob(NamedTuple):
    """The region of one colour covering the middle of a detected die's box, found in a square window
    of the frame round it (look_round): its outline and the window (BGR and Lab) in window pixels, and
    where the window lies in the frame (frame pixels per window pixel, and its top-left corner); `seen`
    marks the window's pixels within the frame (beyond it, the frame's edge pixels are repeated)."""

    outline: np.ndarray
    window: np.ndarray
    lab: np.ndarray
    scale: float
    left: int
    top: int
    seen: np.ndarray


def look_round(frame: np.ndarray, box, size: int = BLOB_PX) -> Blob | None:
    """The region of one colour covering the middle of a detected die's box (None when there is none):
    found once per die, it gives the face's outline (refine_box) and tells what no die looks like
    (is_no_die, is_bare_floor). The window spans 1.4 times the box, shrunk to `size` pixels a side."""
    (cx, cy), (w, h), _ = box
    span = max(int(1.4 * max(w, h)), 4)
    window, left, top = frame_window(frame, cx, cy, span)
    window = shrink(window, size, size)
    # A tighter colour cut than for pips: the side faces, shaded a little darker, stay out.
    lab = cv2.cvtColor(window, cv2.COLOR_BGR2LAB)
    face, _ = _face_region(lab, cut_share=SIDE_FACE_CUT)
    face = _fill_small_holes(face, max_hole=size * size // 4)
    face = cv2.morphologyEx(face, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)))
    contours, _ = cv2.findContours(face, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    scale = span / size
    middles = (np.arange(size) + 0.5) * scale - 0.5  # each window pixel's centre, from the window's corner
    height, width = frame.shape[:2]
    seen = (((top + middles >= 0) & (top + middles <= height - 1))[:, None]
            & ((left + middles >= 0) & (left + middles <= width - 1))[None, :])
    return Blob(max(contours, key=cv2.contourArea), window, lab, scale, left, top, seen)


# A face's outline is a square, no longer than FACE_ASPECT times its width (the colour cut leaves it
# ragged); an outline up to TOP_AND_SIDE_ASPECT times as long as wide is a face with a side face of
# the die's colour beside it (end_squares).
FACE_ASPECT = 1.35
TOP_AND_SIDE_ASPECT = 2.0


def _filled_rectangle(blob: Blob) -> tuple[tuple[float, float], tuple[float, float], float] | None:
    """The outline's least rectangle (window pixels), where the outline fills it and it is not tiny."""
    (fx, fy), (fw, fh), angle = cv2.minAreaRect(blob.outline)
    if min(fw, fh) < 0.2 * BLOB_PX:
        return None
    if cv2.contourArea(blob.outline) < SQUARE_FILL * fw * fh:
        return None  # round (a screw head, a coin, a pip) or ragged: a die's face fills its square
    return (fx, fy), (fw, fh), angle


def _in_frame(blob: Blob, x: float, y: float) -> tuple[float, float]:
    """A point of the blob's window in frame pixels (+0.5: resize maps pixel centres, not corners)."""
    return (x + 0.5) * blob.scale - 0.5 + blob.left, (y + 0.5) * blob.scale - 0.5 + blob.top


def refine_box(blob: Blob | None) -> FaceBox | None:
    """The top face's own rectangle, from the region of one colour round a detected die (look_round: the
    die's box may include a side face, a shadow or the edge of a neighbour); None when no square face
    shows there."""
    if blob is None or (rectangle := _filled_rectangle(blob)) is None:
        return None
    (fx, fy), (fw, fh), angle = rectangle
    if max(fw, fh) > FACE_ASPECT * min(fw, fh):
        return None
    return FaceBox(_in_frame(blob, fx, fy), (fw * blob.scale, fh * blob.scale), angle)


def end_squares(blob: Blob | None) -> list[FaceBox]:
    """The two squares at the ends of an outline too long for one face (up to TOP_AND_SIDE_ASPECT):
    a top face and a side face of the die's colour, one of them the top face; none for any other."""
    if blob is None or (rectangle := _filled_rectangle(blob)) is None:
        return []
    (fx, fy), (fw, fh), angle = rectangle
    short, long = min(fw, fh), max(fw, fh)
    if not FACE_ASPECT * short < long <= TOP_AND_SIDE_ASPECT * short:
        return []
    along = math.radians(angle if fw >= fh else angle + 90.0)
    reach = (long - short) / 2
    side = short * blob.scale
    return [FaceBox(_in_frame(blob, fx + sign * reach * math.cos(along), fy + sign * reach * math.sin(along)),
                    (side, side), angle) for sign in (-1, 1)]


# A lamp's glare on a glossy floor is blown out: at least GLARE_BLOWN_SHARE of it has every channel
# at BLOWN_OUT or more; it is blank: under GLARE_MARKED_SHARE of it differs from its own colour by
# more than GLARE_MARK; and it lies flat in the floor, only brightening it: no side of the ring round
# it is darker than the floor by DIE_BODY_SHADE. A die's face, even under such glare, shows its pips
# or their tint; a die stands up from the floor, its side faces or its shadow darkening some side of
# it; and its face is square (a blown-out face whose pips are lost fills 0.9 of its rectangle; glare
# spots of renders 0.75 to 0.86).
BLOWN_OUT = 235
GLARE_BLOWN_SHARE = 0.5
GLARE_MARK = 30.0
GLARE_MARKED_SHARE = 0.01
DIE_BODY_SHADE = 15.0
BLOWN_FACE_FILL = 0.88


def is_wide_disc(frame: np.ndarray, box) -> bool:
    """Whether the region of one colour round a found die, looked for in a window WIDE_DISC_LOOK times
    as wide as look_round's at the same scale, is a disc as large as the detector's box (_is_disc): a
    screw head the detector sized smaller than it is runs past look_round's window, and a disc cut off
    so is no disc there (byler-d6's rig, found by networks that never saw it, on 12 of its 132
    table-camera photos)."""
    (x, y), (width, height), angle = box
    wider = look_round(frame, ((x, y), (WIDE_DISC_LOOK * width, WIDE_DISC_LOOK * height), angle),
                       round(WIDE_DISC_LOOK * BLOB_PX))
    return wider is not None and _is_disc(wider, box)


def is_no_die(blob: Blob | None, box) -> bool:
    """Whether what was found in a die's box (its region of one colour: look_round) is something no die
    looks like from any side: a disc as large as the box (a screw head, a coin; a one's pip is a disc,
    but a third of the die across), or a blank blown-out patch that is not square (a lamp's glare), or
    a lamp's small round reflection on bare floor, or bare floor but for a speck."""
    return blob is not None and (_is_disc(blob, box) or _is_glare(blob) or _is_glare_dot(blob)
                                 or is_bare_floor(blob))


# The window round a speck of dust is the floor's colour throughout but for the speck: the one-colour
# region covers nearly all of it, and few of its pixels differ from its median colour.
BARE_SHARE = 0.9
BARE_MARK = 15.0
BARE_MARKED_SHARE = 0.035


def is_bare_floor(blob: Blob | None) -> bool:
    """Whether the region of one colour round a die (look_round) is bare floor but for a speck: one
    colour all round the middle but for a mark far smaller than a face. No die is there, whatever its
    specks were read as (a pair of them as a two, in an underexposed frame)."""
    if blob is None or cv2.contourArea(blob.outline) < BARE_SHARE * (blob.window.shape[0] - 1) ** 2:
        return False
    median = np.median(blob.lab.reshape(-1, 3), axis=0).astype(np.uint8)
    return float(np.mean(_colour_distance(blob.lab, median) > BARE_MARK)) < BARE_MARKED_SHARE


# A die's shadow is the floor darkened: its lightness at least DIE_BODY_SHADE under the floor's round
# it, its colour within SHADE_CHROMA, in Lab's a and b, of some share of the floor's (renders n1: shadows
# 0 to 9 off the floor's, the red, white and black dice left unread beside them 0 to 33; n4 094241, a
# deep shadow on a blue desk, L 9 against 103, 16 off the floor's blue but 0.2 of it).
SHADE_CHROMA = 12.0


def is_floor_in_shade(blob: Blob | None) -> bool:
    """Whether the region of one colour round a die (look_round) is the floor in shade: darker than the
    floor round the window, of the floor's own colour."""
    if blob is None:
        return False
    inside = np.median(blob.lab[_region(blob).astype(bool)].astype(np.float32), axis=0)
    floor = np.median(_rim(blob.lab).astype(np.float32), axis=0)
    # Shade dims the floor's colour toward grey as it darkens it: a deep shadow on a blue desk is nearly
    # neutral black. So the shade's colour (a, b off grey) is some share, none to all, of the floor's.
    shade, lit = inside[1:] - 128.0, floor[1:] - 128.0
    share = float(np.clip(shade @ lit / max(float(lit @ lit), 1.0), 0.0, 1.0))
    return bool(inside[0] <= floor[0] - DIE_BODY_SHADE and np.all(np.abs(shade - share * lit) <= SHADE_CHROMA))


def _is_disc(blob: Blob, box) -> bool:
    """A disc at least 0.7 of the detector's box across: nearly filling its circle, not a square."""
    (_, _), radius = cv2.minEnclosingCircle(blob.outline)
    _, (fw, fh), _ = cv2.minAreaRect(blob.outline)
    area = cv2.contourArea(blob.outline)
    return (2 * radius * blob.scale >= 0.7 * max(box[1]) and area >= 0.85 * np.pi * radius * radius
            and area < SQUARE_FILL * fw * fh)


def _is_glare(blob: Blob) -> bool:
    """Blown out, blank and flat in the floor (GLARE_BLOWN_SHARE, GLARE_MARKED_SHARE, DIE_BODY_SHADE),
    and not a square face where it is seen: a patch cut by the frame's edge, its edge pixels repeated
    beyond, would look straight-sided there (renders b7, a lamp's glare at the top edge)."""
    region = _region(blob)
    shape = blob.outline
    if not blob.seen.all():
        in_frame, _ = cv2.findContours(region * blob.seen.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        if not in_frame:
            return False
        shape = max(in_frame, key=cv2.contourArea)
    _, (fw, fh), _ = cv2.minAreaRect(shape)
    if cv2.contourArea(shape) >= BLOWN_FACE_FILL * fw * fh:
        return False
    # Its rim, where it fades into the floor, is left out.
    inside = cv2.erode(region, np.ones((3, 3), np.uint8), iterations=2).astype(bool)
    if not inside.any():
        return False
    if np.mean(blob.window[inside].min(axis=1) >= BLOWN_OUT) < GLARE_BLOWN_SHARE:
        return False
    lab = blob.lab[inside].reshape(-1, 1, 3)
    own_colour = np.median(lab.reshape(-1, 3), axis=0).astype(np.uint8)
    if np.mean(_colour_distance(lab, own_colour) > GLARE_MARK) >= GLARE_MARKED_SHARE:
        return False
    grey = cv2.cvtColor(blob.window, cv2.COLOR_BGR2GRAY)
    return _darkest_side_round(region, grey) >= _floor_grey(grey) - DIE_BODY_SHADE


# A lamp's reflection on a glossy floor, smaller than a die: the window's one spot blown out in every
# channel (BLOWN_OUT), round (filling GLARE_DOT_FILL of its rectangle, at most GLARE_DOT_ASPECT as long
# as wide), GLARE_DOT_AREA of the window, clear of its edges; and beyond its halo (half its width round
# it) bare floor: under GLARE_DOT_MARKED_SHARE of it off the floor's colour there by BARE_MARK. A die with
# such a spot on its face still shows its edges, pips, side faces or shadow round it (renders b12 to
# n2, off the floor's median colour: such spots on the floor 0 to 33 % marked, 7 of 9 under 25 %; dice
# with one, 76 % and more).
GLARE_DOT_AREA = (0.005, 0.1)
GLARE_DOT_FILL = 0.6
GLARE_DOT_ASPECT = 1.5
GLARE_DOT_MARKED_SHARE = 0.25


def _is_glare_dot(blob: Blob) -> bool:
    """A lamp's small round reflection on bare floor (GLARE_DOT_*)."""
    window = blob.window
    side = window.shape[0]
    blown = (window.min(axis=2) >= BLOWN_OUT).astype(np.uint8)
    count, _, stats, _ = cv2.connectedComponentsWithStats(blown, connectivity=8)
    if count != 2:
        return False
    x, y, width, height, area = stats[1]
    low, high = GLARE_DOT_AREA
    if not (low * side * side <= area <= high * side * side and x > 0 and y > 0
            and x + width < side and y + height < side):
        return False
    if area < GLARE_DOT_FILL * width * height or max(width, height) > GLARE_DOT_ASPECT * min(width, height):
        return False
    across = max(width, height) + 1
    halo = cv2.dilate(blown, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (across, across)))
    rows, columns = np.nonzero(halo == 0)
    if len(rows) < side:
        return False
    return float(np.mean(_off_the_floor(blob.lab[rows, columns], rows, columns) > BARE_MARK)) < GLARE_DOT_MARKED_SHARE


def _off_the_floor(lab: np.ndarray, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """How far each of these window pixels (Lab, at `rows`, `columns`) lies from the floor's colour there,
    weighted as _colour_distance: the floor is taken as a plane in each channel, since a lamp's light
    falls off across it (renders x3 952057: 42 % of a bare floor's pixels off its median colour)."""
    where = np.column_stack([np.ones(len(rows)), rows, columns]).astype(np.float32)
    plane, *_ = np.linalg.lstsq(where, lab.astype(np.float32), rcond=None)
    return np.abs(lab - where @ plane) @ _DISTANCE_WEIGHTS[0]


def _region(blob: Blob) -> np.ndarray:
    """The region of one colour as a 0/1 mask of its window."""
    region = np.zeros(blob.window.shape[:2], np.uint8)
    cv2.drawContours(region, [blob.outline], -1, 1, cv2.FILLED)
    return region


def _rim(window: np.ndarray) -> np.ndarray:
    """A window's outermost three pixels all round, one row each (the floor round what is in its middle)."""
    channels = window.shape[2] if window.ndim == 3 else 1
    return np.concatenate([part.reshape(-1, channels) for part in
                           (window[:3], window[-3:], window[3:-3, :3], window[3:-3, -3:])])


def _floor_grey(grey: np.ndarray) -> float:
    """The median of a grey window's outermost pixels: the floor round what is in its middle."""
    return float(np.median(_rim(grey)))


def _darkest_side_round(region: np.ndarray, grey: np.ndarray) -> float:
    """The mean grey of the darkest eighth (by direction) of a ring just outside a region (a 0/1 mask
    of the window), about a sixth of a die wide."""
    near = cv2.dilate(region, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)))
    far = cv2.dilate(region, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (15, 15)))
    rows, columns = np.nonzero(far > near)
    moments = cv2.moments(region, binaryImage=True)
    middle_x, middle_y = moments["m10"] / moments["m00"], moments["m01"] / moments["m00"]
    eighth = (np.floor((np.arctan2(rows - middle_y, columns - middle_x) + np.pi) / (np.pi / 4)).astype(int)) % 8
    values = grey[rows, columns].astype(np.float32)
    return float(min(values[eighth == k].mean() for k in range(8) if np.any(eighth == k)))


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
