"""Find the dice in a frame of the tray and read the top face of each.

Stages:
1. dice: a small learned detector (vision.die_detector) finds each die's top face (centre and size)
   and anything else in the tray (a hand), in a forward pass over the frame scaled down (and
   coarser or finer ones for dice too large or too small for it); it learnt dice of every colour on
   every tray from photographs and generated pictures, so no colour or size rule is set here;
2. faces: each face is outlined again in the full-resolution frame (the region of its own colour,
   or else the detector's square turned to the face's edges, or both when they disagree);
3. a learned face classifier (vision.face_classifier) reads each face, a doubtful one in eight
   symmetric views, and a face still doubtful also in the detector's square round the whole die (as
   the classifier learnt the photos' dice); when it is still not sure, the pips are counted too: the
   blobs that differ from the face's own colour, in either direction, in a centrally symmetric
   layout; the value is trusted when the classifier is sure or both agree. A large die of the
   coarser looks read surely takes the place of the spots on its face (its pips, which the finer look
   takes for dice).
Anything doubtful makes the whole reading "unsure" with a reason, never a confident wrong value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import cv2
import numpy as np

from .die_detector import SURE, default_detector
from .face_classifier import CROP_SIZE, SECOND_LOOK_BELOW, crop_faces, default_classifier, face_angle
from .imaging import as_bgr, frame_window, shrink
from .reading import Die, Problem, Reading

MIN_SIDE, MAX_SIDE = 320, 4096
# Each face is analysed as a square of this many pixels, whatever its size in the frame.
FACE_PX = 40
# The pip count looks at the face and a rim of tray round it: a face found a little too small
# keeps its corner pips whole, and the tray, which touches the crop's edge, is no pip.
FACE_MARGIN = 1.0


@dataclass(frozen=True)
class FaceRead:
    """What the pip analysis saw on one face."""

    value: int | None
    confidence: float
    pip_count: int
    contrast: float
    symmetry_error: float


def as_frame(image: np.ndarray) -> np.ndarray:
    """The frame as 3-channel uint8, or a ValueError saying what is wrong with it (its size too)."""
    image = as_bgr(image)
    height, width = image.shape[:2]
    if min(height, width) < MIN_SIDE // 2 or max(height, width) < MIN_SIDE or max(height, width) > MAX_SIDE:
        raise ValueError(
            f"image is {width}x{height}; the reader takes frames from {MIN_SIDE} to {MAX_SIDE} px wide"
        )
    return image


# Lightness difference plus twice each chroma difference: chroma is what separates a red die from a
# grey tray of the same brightness.
_DISTANCE_WEIGHTS = np.array([[1.0, 2.0, 2.0]], np.float32)


def _colour_distance(lab: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """Per pixel, the distance from one Lab colour (_DISTANCE_WEIGHTS), saturating at 255."""
    # The colour as an OpenCV scalar: filling an image-sized array with it would cost 5 times as much.
    return cv2.transform(cv2.absdiff(lab, (*colour.tolist(), 0)), _DISTANCE_WEIGHTS)


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


def refine_box(frame: np.ndarray, box) -> tuple[tuple[float, float], tuple[float, float], float] | None:
    """The top face's own rectangle, found around a detected die's box (which may include a side face, a
    shadow or the edge of a neighbour); None when no square face shows there."""
    (cx, cy), (w, h), _ = box
    span = max(int(1.4 * max(w, h)), 4)
    size = 48
    window, left, top = frame_window(frame, cx, cy, span)
    window = shrink(window, size, size)
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
    k = span / size
    # +0.5 pixel centres: resize maps pixel centres, not corners
    return (((fx + 0.5) * k - 0.5 + left, (fy + 0.5) * k - 0.5 + top), (fw * k, fh * k), angle)


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


# How the pip count and the learned classifier are combined, measured on the dice the detector found
# with the classifier of commit 494a1f4: the pip count alone is right on 66 % of the byler-d6 train
# split's 1485 dice (marbled dice, tiny pips and glints fool it). A value when both agree with the
# classifier >= 0.6, or the classifier alone is >= 0.8: 1353 right and 7 wrong there, 202 right and
# 0 wrong of samples/' 221; agreeing from 0.5 instead: 1361 and 7, but 1 wrong on samples/; alone
# from 0.9: 1302 and 5. (The classifier was trained on that split, so its figures are optimistic;
# the README gives the test split's.)
AGREEMENT_MIN = 0.6
CLASSIFIER_ALONE = 0.8
# A faint peak (below the detector's SURE) is less likely a die to begin with, so the classifier alone
# must be surer of its face. A screw head in a byler-d6 train photo, found faintly, was read as a two
# at 0.84 by a classifier trained more on the photographs; the 41 faint peaks that were dice and read
# alone at >= 0.8 (both splits and samples/) scored 0.84 to 0.995, and from 0.9 up two of them, left to
# the pip count, are no longer read (the reading says "may be a die").
FAINT_CLASSIFIER_ALONE = 0.9
# Dice are looked for this share of the tray region's size beyond its edges.
TRAY_RIM = 0.05
# A tray region (with its rim, within the frame) narrower than this many pixels is a mistake.
MIN_TRAY_PX = 32
# Without the classifier the pip count is trusted when its own layout check is this sure.
MIN_CONFIDENCE = 0.5


def alone_from(spot) -> float:
    """The classifier's confidence from which a detected die's value is taken without the pip count."""
    return CLASSIFIER_ALONE if spot.score >= SURE else FAINT_CLASSIFIER_ALONE


def prepare() -> None:
    """Do the one-time set-up now, so the first frame read is not slowed by it: OpenCV builds its
    Lab conversion tables on first use (half a second here) and the networks load.
    For a camera loop or a command that times its readings."""
    cv2.cvtColor(np.zeros((2, 2, 3), np.uint8), cv2.COLOR_BGR2LAB)
    default_detector().look(np.zeros((240, 320, 3), np.uint8))
    default_classifier().logits(np.zeros((1, 3, CROP_SIZE, CROP_SIZE), np.float32))


def combine(classical: FaceRead, learned: tuple[int | None, float] | None,
            alone: float = CLASSIFIER_ALONE) -> tuple[int | None, float]:
    """One value and confidence from the pip count and (unless left out) the classifier, which is
    trusted without the pip count from `alone` up."""
    if learned is None:
        return classical.value, classical.confidence
    learned_value, learned_confidence = learned
    if classical.value is not None and learned_value == classical.value and learned_confidence >= AGREEMENT_MIN:
        return classical.value, 1.0 - (1.0 - classical.confidence) * (1.0 - learned_confidence)
    if learned_value is not None and learned_confidence >= alone:
        return learned_value, learned_confidence
    return None, 0.0


def face_boxes(frame: np.ndarray, spot) -> list[tuple[tuple[float, float], tuple[float, float], float]]:
    """The top face of a detected die as a rotated square: the face's own outline where its colour
    shows it and its size agrees with the detector's, else the detector's upright square round it,
    turned and shrunk to the face's edges, followed by the outline when there is one. The classifier
    reads both and the surer is kept: the detector sizes a die with a lone pip on a dark tray too
    small at times, and the outline takes in a shadow or a neighbour at others."""
    refined = refine_box(frame, spot.box)
    outline = None
    if refined is not None:
        side = math.sqrt(refined[1][0] * refined[1][1])
        outline = (refined[0], (side, side), refined[2])
        # A face's own square is 0.71 (turned 45 degrees) to 1 times the upright one round it.
        if 0.55 * spot.size <= side <= 1.2 * spot.size:
            return [outline]
    centre, (whole, _), turn = detector_square(frame, spot)
    side = whole / (abs(math.cos(math.radians(turn))) + abs(math.sin(math.radians(turn))))
    return [(centre, (side, side), turn)] + ([outline] if outline else [])


def detector_square(frame: np.ndarray, spot) -> tuple[tuple[float, float], tuple[float, float], float]:
    """The detector's upright square round a die, turned to line up with its face but not shrunk to it:
    it takes in the whole die, side faces and all, as the photos' labels the classifier learnt from do."""
    (window,) = crop_faces(frame, [spot.box], size=FACE_PX, margin=1.0)
    return (spot.x, spot.y), (spot.size, spot.size), face_angle(window) % 90.0


def surest(candidates: list, opinions: list[tuple[int | None, float]]) -> tuple:
    """The (box, opinion) of the candidate boxes of one die whose reading is surest: a face value over
    "not a face", then the higher confidence; the first on a tie."""
    return max(zip(candidates, opinions), key=lambda pair: (pair[1][0] is not None, pair[1][1]))


def on_face(box, x: float, y: float) -> bool:
    """Whether the point (x, y) lies on the rotated square face `box`."""
    (cx, cy), (side, _), angle = box
    turn = math.radians(angle)
    along = (x - cx) * math.cos(turn) + (y - cy) * math.sin(turn)
    across = -(x - cx) * math.sin(turn) + (y - cy) * math.cos(turn)
    return max(abs(along), abs(across)) <= side / 2


def distinct_dice(spots, boxes) -> list[int]:
    """Indices of the spots (strongest first) that are dice of their own. The top faces of dice lying
    flat are all at one height, so they never overlap in the picture: a spot on a stronger spot's face
    is that die found twice (a corner pip of a three read as a one, for instance)."""
    kept: list[int] = []
    for index, spot in enumerate(spots):
        if not any(on_face(boxes[other], spot.x, spot.y) for other in kept):
            kept.append(index)
    return kept


def with_large_dice(frame: np.ndarray, spots: list, read: list, large: list, large_read: list) -> tuple[list, list]:
    """The dice and their (box, opinion), with each large die of the detector's coarser looks that the
    classifier reads surely in place of the spots on its face: its pips, which the first look takes
    for dice, or the die itself found faintly. A spot read as surely as the reader would take its
    value keeps the large one out when it is the large die itself, or a die of its own: read as a face
    other than one, or as a one with a square face of its own (then the large one is something shaped
    like a die at that scale: two dice on a dark tray are a two)."""
    def keeps_it_out(index: int, big, face) -> bool:
        opinion = read[index][1]
        # A faint spot must be read more surely than a sure one.
        if opinion is None or opinion[0] is None or opinion[1] < alone_from(spots[index]):
            return False
        return (_same_die(spots[index], big, face) or opinion[0] != 1
                or refine_box(frame, spots[index].box) is not None)

    for big, (box, opinion) in zip(large, large_read):
        if opinion is None or opinion[0] is None or opinion[1] < CLASSIFIER_ALONE:
            continue
        on_it = [index for index, spot in enumerate(spots) if on_face(box, spot.x, spot.y)]
        if any(keeps_it_out(index, big, box) for index in on_it):
            continue
        spots = [spot for index, spot in enumerate(spots) if index not in on_it] + [big]
        read = [pair for index, pair in enumerate(read) if index not in on_it] + [(box, opinion)]
    return spots, read


def _same_die(spot, big, face) -> bool:
    """Whether the first look's spot is the large die itself: near its face's centre and nearly its
    size. (The first look sizes a large die's pips wildly, up to two thirds of the die, but off the
    centre but for the middle pip of a one, three or five.)"""
    (cx, cy), (side, _), _ = face
    return math.dist((spot.x, spot.y), (cx, cy)) <= 0.25 * side and spot.size >= 0.6 * big.size


def _boxes_and_opinions(frame: np.ndarray, candidates: list, use_classifier: bool) -> list:
    """For each die's candidate squares (face_boxes), the square of its top face and the classifier's
    (value, confidence) of it (None without the classifier): the square read most surely at first
    sight, then read again in its eight views if doubtful (only the square kept: on the byler-d6
    photos, with many doubtful dice of two squares, a photo took 35 ms instead of 46, readings alike)."""
    if not use_classifier:
        return [(boxes[0], None) for boxes in candidates]
    classifier = default_classifier()
    opinions = iter(classifier.classify(frame, [box for boxes in candidates for box in boxes], turned=True,
                                        second_look=False))
    chosen = [surest(boxes, [next(opinions) for _ in boxes]) for boxes in candidates]
    doubtful = [index for index, (_, opinion) in enumerate(chosen) if opinion[1] < SECOND_LOOK_BELOW]
    again = classifier.classify_in_views(frame, [chosen[index][0] for index in doubtful])
    for index, opinion in zip(doubtful, again):
        chosen[index] = (chosen[index][0], opinion)
    return chosen


def tray_view(frame: np.ndarray, region: tuple[int, int, int, int] | None) -> tuple[np.ndarray, int, int]:
    """The part of the frame dice are looked for in, and its top-left corner: the calibrated tray
    region and a rim round it (a die's top face, nearer the camera, shows a little outside the floor
    it lies on), or the whole frame."""
    if region is None:
        return frame, 0, 0
    x, y, width, height = region
    rim = round(TRAY_RIM * max(width, height))
    left, top = max(int(x) - rim, 0), max(int(y) - rim, 0)
    right = min(int(x + width) + rim, frame.shape[1])
    bottom = min(int(y + height) + rim, frame.shape[0])
    if right - left < MIN_TRAY_PX or bottom - top < MIN_TRAY_PX:
        raise ValueError(f"tray region {tuple(region)} does not lie within the {frame.shape[1]}x{frame.shape[0]} frame")
    return frame[top:bottom, left:right], left, top


def _found_and_read(frame: np.ndarray, sight, left: int, top: int, use_classifier: bool) -> tuple[list, list, list]:
    """The dice the detector saw (moved into frame pixels from the view at left, top), each once, with
    its face's square and the classifier's opinion, and the points something that is no die covers."""
    spots, large = ([replace(spot, x=spot.x + left, y=spot.y + top) for spot in found]
                    for found in (sight.dice, sight.large))
    foreign = [(x + left, y + top) for x, y in sight.foreign]
    candidates = [face_boxes(frame, spot) for spot in spots]
    distinct = distinct_dice(spots, [boxes[0] for boxes in candidates])
    spots = [spots[i] for i in distinct]
    read = _boxes_and_opinions(frame, [candidates[i] for i in distinct], use_classifier)
    if large and use_classifier:
        large_read = _boxes_and_opinions(frame, [face_boxes(frame, spot) for spot in large], True)
        spots, read = with_large_dice(frame, spots, read, large, large_read)
        # The first look takes the edges of a die too large for it for something else (a hand).
        accepted = [spot for spot in spots if spot in large]
        foreign = [point for point in foreign
                   if not any(math.dist(point, (big.x, big.y)) <= big.size for big in accepted)]
    if use_classifier:
        read = read_in_detector_squares(frame, spots, read)
    return spots, read, foreign


def read_in_detector_squares(frame: np.ndarray, spots: list, read: list) -> list:
    """The (box, opinion) of each die, where a face not read surely enough to be taken alone is read
    again, in its eight views, in the detector's square round the whole die, and a surer face value
    read there kept (the face's own box stays). The classifier learnt the photos' dice from their
    labels, upright boxes round the whole die: a face's tight outline, at 0.6 of such a box, shows a
    dark die's dim pips too small to it. On byler-d6 test: per-die 95.5 -> 98.1 %, photos read ok and
    exactly 78 -> 90 %, still no misread.
    Only a value is taken from there: that square takes in the side faces and the tray, so its "no
    face" says nothing about the face, and a faint guess at a value must not overrule the outline's
    "no face" (a screw head's). And only after the large dice took the place of their pips: in a
    square that large, a large die's pip and its neighbours look like a face of their own."""
    doubtful = [index for index, (spot, (_, opinion)) in enumerate(zip(spots, read))
                if opinion[1] < alone_from(spot)]
    again = default_classifier().classify_in_views(frame, [detector_square(frame, spots[index]) for index in doubtful])
    read = list(read)
    for index, opinion in zip(doubtful, again):
        if opinion[0] is not None and opinion[1] > read[index][1][1]:
            read[index] = (read[index][0], opinion)
    return read


def read_dice(image: np.ndarray, use_classifier: bool = True,
              region: tuple[int, int, int, int] | None = None) -> Reading:
    """Read every die in a BGR frame of the tray; only within `region` (x, y, width, height: the
    calibrated tray) when given. A ValueError says what is wrong with a bad image."""
    frame = as_frame(image)
    view, left, top = tray_view(frame, region)
    spots, read, foreign = _found_and_read(frame, default_detector().look(view), left, top, use_classifier)
    dice: list[Die] = []
    problems: list[Problem] = []
    if foreign:
        x, y = np.mean(foreign, axis=0)
        problems.append(Problem(f"something that is no die is in the tray near ({x:.0f}, {y:.0f}) (a hand?)",
                                "foreign", where=(float(x), float(y))))
    for spot, (box, opinion) in zip(spots, read):
        alone = alone_from(spot)
        if opinion is not None and opinion[0] is not None and opinion[1] >= alone:
            # The pip count could only agree: spare it (most dice of a clear throw are read so).
            dice.append(Die(opinion[0], spot.x, spot.y, box[1][0], box[2], round(opinion[1], 3)))
            continue
        (face,) = crop_faces(frame, [box], size=FACE_PX, margin=FACE_MARGIN)
        classical = read_face(face)
        value, confidence = combine(classical, opinion, alone)
        where = (spot.x, spot.y)
        said = f"({spot.x:.0f}, {spot.y:.0f})"
        if value is None and spot.score < SURE:
            surely_no_face = opinion is not None and opinion[0] is None and opinion[1] >= CLASSIFIER_ALONE
            if classical.pip_count > 0 and not surely_no_face:
                problems.append(Problem(f"something at {said} may be a die", "maybe_die", where=where))
            # Otherwise a faint peak without a face's pips is a screw head, a crumb, a pattern.
            continue
        dice.append(Die(value, spot.x, spot.y, box[1][0], box[2], round(min(max(confidence, 0.0), 1.0), 3)))
        if value is None:
            problems.append(Problem(f"the die at {said} could not be read", "unreadable", where=where))
        elif confidence < MIN_CONFIDENCE:
            problems.append(Problem(f"the die at {said} looks like {value} but not surely", "doubtful", value,
                                    where))
    dice.sort(key=lambda d: (d.y, d.x))
    return Reading(tuple(dice), "unsure" if problems else "ok", tuple(problems))
