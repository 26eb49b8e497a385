"""Find the dice in a frame of the tray and read the top face of each.

`DiceReader(detector, classifier).read(frame, tray=...)` runs these stages, in this order:
1. frame: check the picture; a frame larger than WORK_SIDE is halved until it is not (a die's face
   needs tens of pixels, not hundreds); a frame too small to hold a readable die is refused;
2. tray: only the tray and a rim round it are looked at (vision.tray); nothing outside it is read;
3. find: a small learned detector (vision.die_detector) gives each die's centre and size, looking
   again coarser or finer when the dice are too large or too small for its first look, and what it
   sees only dimly apart;
4. outline: each face is outlined again in the full-resolution frame (the region of its own colour,
   or the detector's square turned to the face's edges, or both when they disagree: vision.pips);
5. read: the learned face classifier (vision.face_classifier) reads each face, a doubtful one again
   in its eight symmetric views and in the detector's square round the whole die, turned four ways
   (the two squares reading one value make it surer, for a die with nothing to lean on), and for such
   a die in its square moved outward and in squares of other sizes; where it is
   still not sure, the pips are counted too (vision.pips), and a value is taken when both agree, for
   a die found surely only when it has nothing to lean on; a doubtful die is read at a dim find off
   its centre too (two dice of one colour touching, outlined as one); a die seen only dimly is taken
   where both read one value there and it has the size of the frame's dice;
6. judge: each die gets its value, or the reading becomes "unsure" with a problem saying what and
   where (ProblemKind). Anything doubtful makes the whole reading unsure, never a confident wrong value
   (a face outlined far wider than the frame's other dice needs a surer classifier or the pips); but
   something left unread that no die looks like (a screw head, a coin, a glare spot, a speck of dust
   on bare floor, a die's shadow or side face beside it, anything under half a die's size without
   pips) says nothing, and bare floor is no die whatever its specks were read as.
`read_dice(frame)` is the same with the packaged networks.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import NamedTuple

import cv2
import numpy as np

from .die_detector import SURE, Detection, DieDetector, Sight, default_detector
from .face_classifier import (
    CROP_SIZE,
    SECOND_LOOK_BELOW,
    FaceBox,
    FaceClassifier,
    Opinion,
    crop_faces,
    default_classifier,
    face_angle,
)
from .imaging import as_bgr, halve
from .pips import (
    FACE_PX,
    Blob,
    FaceRead,
    end_squares,
    is_bare_floor,
    is_floor_in_shade,
    is_no_die,
    is_wide_disc,
    look_round,
    read_face,
    refine_box,
)
from .reading import Die, Problem, ProblemKind, Reading
from .tray import Tray, TrayLike, as_tray

# A frame must be this large to hold a readable die: at the detector's first look (320 px) the
# smallest die it finds is about 9 px, so a smaller frame holds dice of a few pixels only.
MIN_SIDE = 320
# Frames larger than this (a 12-megapixel still) are halved until they are not: their dice are still
# tens of pixels across, every stage's cost grows with the frame, and a 2x2 mean is cheap.
WORK_SIDE = 4096
# The pip count looks at the face's square itself: a rim of tray round it lost more readings than it
# gained over every source.
FACE_MARGIN = 1.0
# A face's value is taken where the pip count and the classifier (from AGREEMENT_MIN) agree, or the
# classifier alone is CLASSIFIER_ALONE sure: the pip count alone is fooled by marbling, tiny pips and
# glints. Chosen on byler-d6's train split; agreeing from 0.5 misread a die of samples/.
AGREEMENT_MIN = 0.6
CLASSIFIER_ALONE = 0.8
# A faint find is less likely a die, so the classifier alone must be surer of its face: a screw head
# found faintly was read as a two at 0.84.
FAINT_CLASSIFIER_ALONE = 0.9
# Without the classifier the pip count is trusted when its own layout check is this sure.
MIN_CONFIDENCE = 0.5
# Two squares of one face reading the same value each from SQUARES_AGREE_MIN (stage 5): from 0.6 they
# took more wrong rolls on renders and read more real photos wrong without a word.
SQUARES_AGREE_MIN = 0.7
# A die's top face lies further from the picture's centre than its outline, whose side faces show
# toward the centre: a doubtful face is read again moved outward by these shares of its side, and
# only one already read as a value from MOVED_FROM (to make a likely value sure, not to find one).
OUTWARD_SHIFTS = (0.1, 0.2)
MOVED_FROM = 0.5
# A doubtful face's square may be too tight (an outline round a lit corner) or too loose (one taking in
# a shadow): one read as a value from MOVED_FROM, of a die standing apart, is read at these sizes too.
RESIZED = (0.8, 1.25, 1.4)
# A die leaning on another lies within about a face's side of it, centre to centre (on renders, 0.6 to
# 1.1 sides). Flat dice are as near only when they touch.
LEANING_REACH = 1.25
# A die's shadow, found as a die, lies within this many face sides of it, centre to centre (a lamp 30
# degrees above the table casts a shadow about 1.7 sides long).
SHADOW_REACH = 2.0
# One lamp casts every shadow in a frame the same way: a find lying from its die within SHADOW_TURN
# degrees of the way another die's shadow lies from it, and within SHADOW_LENGTHS times as far, lies
# as a shadow does.
SHADOW_TURN = 20.0
SHADOW_LENGTHS = 1.6
# A glossy die off the frame's centre shows a side face toward the centre, found again as a die of its
# own: smaller than SIDE_FACE_SIZE of the die, within SIDE_FACE_REACH of it, at most SIDE_FACE_TURN
# degrees off the line to the centre. A die cocked on it is a whole die, as large as the others.
SIDE_FACE_SIZE = 0.6
SIDE_FACE_REACH = 1.0
SIDE_FACE_TURN = 60.0
# A find read as no face within SIDE_FACE_NEAR of the size of a die read as a value is its side face,
# whatever its own size; dice touching it or cocked on it are read as values there, so are still asked about.
SIDE_FACE_NEAR = 0.55
# A wide lens shows a die this far out (a share of the half diagonal) a side face nearly as large as its
# top face: a faint find within EDGE_SIDE_FACE_NEAR of the die's size, between it and the frame's
# centre, is that side face even where the classifier guessed at a value for it.
EDGE_SHARE = 0.6
EDGE_SIDE_FACE_NEAR = 0.85
# Such a side face read surely as a value is let be where the pip count does not agree, within
# EDGE_SIDE_FACE_REACH of the die's side. Where it agrees, a die touching it is as likely; but two flat
# dice lie a face's side apart at least, so nearer than EDGE_SIDE_FACE_CLOSE it is asked about.
EDGE_SIDE_FACE_REACH = 1.1
EDGE_SIDE_FACE_CLOSE = 1.0
# A face outline this much wider than the frame's typical die (the median face of the dice found
# surely, from MIN_TYPICAL of them) has taken in more than the face: a touching die of its colour, its
# shadow, a cocked die's side face. Its value is taken alone only from OVERSIZED_ALONE. The detector's
# squares, sized from the whole die, run wider and are not judged so.
OVERSIZED = 1.25
OVERSIZED_ALONE = 0.85
# A die the detector sizes this much larger than the typical die, left without a value, is read in a
# square of the typical face's side at its centre too: its own squares take in the floor round it.
OVERSIZED_FIND = 1.4
MIN_TYPICAL = 3
# A dim find on a doubtful die's face, this many face sides or more from its centre, may be the centre
# of a second die its square takes in; nearer, it is the same die found again.
DIM_OFF_CENTRE = 0.2
# A dim find (Sight.dim) is taken where the classifier (from AGREEMENT_MIN) and the pip count read one
# value and it is of the frame's dice's size (these shares of size_of_the_dice): photo noise and specks,
# which the classifier reads as twos surely, are a few pixels across. A faint find smaller than the
# first share gets no value either: it is part of a face or a side face, and it may be a die.
DICE_SIZED = (0.65, 1.5)
# A find under this share of the typical die's size, however sure, is no whole die: read as no face,
# it is asked about only as a faint find is (a lamp's soft reflection on the tray).
PART_OF_A_DIE = 0.5
# An outline of a face and one side face whose long axis lies within END_TURN degrees of the line from
# the frame's centre is read at its outer end too, where a flat die off the centre shows its top face.
# A die cocked on another shows its side face any way round (on renders, 33 to 69 degrees off).
END_TURN = 25.0


class FrameTooSmall(ValueError):
    """The picture is too small to hold a die the reader could read."""


@dataclass(frozen=True)
class FoundDie:
    """One die through the stages: where the detector found it, the square of its top face, and the
    classifier's opinion of that face (None when reading by the pip count alone)."""

    spot: Detection
    box: FaceBox
    opinion: Opinion | None
    # Whether the square is the face's own outline (vision.pips.refine_box), not the detector's square.
    outlined: bool = False
    # The region of one colour round the die (vision.pips.look_round; None where there is none): its
    # outline, and what tells something no die looks like from a die left unread.
    blob: Blob | None = None

    @property
    def confidence(self) -> float:
        """The classifier's confidence in its opinion of the face (0 without the classifier)."""
        return 0.0 if self.opinion is None else self.opinion.confidence


def working_frame(image: np.ndarray) -> tuple[np.ndarray, float]:
    """The frame as 3-channel uint8, halved until no larger than WORK_SIDE, and the scale it was shrunk
    by (1 when not); a ValueError saying what is wrong with a bad image, FrameTooSmall for one too small."""
    frame = as_bgr(image)
    height, width = frame.shape[:2]
    if min(height, width) < MIN_SIDE // 2 or max(height, width) < MIN_SIDE:
        raise FrameTooSmall(f"image is {width}x{height}: too small to hold a readable die; the reader needs "
                            f"frames of at least {MIN_SIDE}x{MIN_SIDE // 2} px")
    halvings = max(0, math.ceil(math.log2(max(height, width) / WORK_SIDE)))
    if halvings:
        frame = halve(frame, width >> halvings, height >> halvings)
    return frame, frame.shape[1] / width


def alone_from(spot: Detection) -> float:
    """The classifier's confidence from which a detected die's value is taken without the pip count."""
    return CLASSIFIER_ALONE if spot.score >= SURE else FAINT_CLASSIFIER_ALONE


def _median_of_enough(values: list[float]) -> float | None:
    """The median of the values; None when fewer than MIN_TYPICAL."""
    return float(np.median(values)) if len(values) >= MIN_TYPICAL else None


def _typical(found: list[FoundDie], measure: Callable[[FoundDie], float]) -> float | None:
    """The median of `measure` over the dice found surely; None when fewer than MIN_TYPICAL are."""
    return _median_of_enough([measure(die) for die in found if die.spot.score >= SURE])


def typical_side(found: list[FoundDie]) -> float | None:
    """The side of the frame's typical die: the median face side of the dice found surely."""
    return _typical(found, lambda die: die.box.size[0])


def typical_found_size(found: list[FoundDie]) -> float | None:
    """The detector's size of the frame's typical die: the median of the dice found surely."""
    return _typical(found, lambda die: die.spot.size)


def size_of_the_dice(found: list[FoundDie]) -> float | None:
    """The detector's size of the frame's dice, to take a dim find by (DiceReader.read_dim): the typical
    die's; where fewer than MIN_TYPICAL dice are found surely, the median of every die found, however
    few. Dice of one kind, low in contrast with the floor (ivory on light wood), are found faintly all
    together; two dice thrown, the others kept aside, are still enough to tell a speck from a die by."""
    sizes = [die.spot.size for die in found]
    return typical_found_size(found) or (float(np.median(sizes)) if sizes else None)


def smaller_than_the_dice(spot: Detection, typical_size: float | None, share: float = DICE_SIZED[0]) -> bool:
    """Whether a find is under `share` of the frame's typical die's size (DICE_SIZED), when there is one."""
    return typical_size is not None and spot.size < share * typical_size


def taken_alone_from(die: FoundDie, typical: float | None) -> float:
    """The classifier's confidence from which a die's value is taken without the pip count, in a frame
    whose typical die has the side `typical`: higher for a face square much wider than that."""
    alone = alone_from(die.spot)
    if die.outlined and typical is not None and die.box.size[0] >= OVERSIZED * typical:
        return max(alone, OVERSIZED_ALONE)
    return alone


def reads_a_value(opinion: Opinion | None, least: float) -> bool:
    """Whether the classifier's opinion reads the face as a value, with at least `least` confidence."""
    return opinion is not None and opinion.value is not None and opinion.confidence >= least


def takes_alone(spot: Detection, opinion: Opinion | None) -> bool:
    """Whether the classifier's opinion of a face is sure enough to be the die's value on its own."""
    return reads_a_value(opinion, alone_from(spot))


def agreed(first: float, second: float) -> float:
    """The confidence in a value two readings give alike, each with its own confidence: taken as wrong
    only when both are."""
    return 1.0 - (1.0 - first) * (1.0 - second)


def combine(classical: FaceRead, learned: Opinion | None, alone: float = CLASSIFIER_ALONE) -> Opinion:
    """One value and confidence from the pip count and (unless left out) the classifier, which is
    trusted without the pip count from `alone` up."""
    if learned is None:
        return Opinion(classical.value, classical.confidence)
    value, confidence = learned
    if classical.value is not None and value == classical.value and confidence >= AGREEMENT_MIN:
        return Opinion(value, agreed(classical.confidence, confidence))
    if value is not None and confidence >= alone:
        return Opinion(value, confidence)
    return Opinion(None, 0.0)


def count_pips(frame: np.ndarray, box: FaceBox) -> FaceRead:
    """The pip count's reading of the face in a square of the frame."""
    (face,) = crop_faces(frame, [box], size=FACE_PX, margin=FACE_MARGIN)
    return read_face(face)


class FaceSquares(NamedTuple):
    """The squares a detected die's top face is read in, the face's own outline when it is one of
    them, and the region of one colour round the die it was outlined from."""

    squares: list[FaceBox]
    outline: FaceBox | None
    blob: Blob | None


def face_boxes(frame: np.ndarray, spot: Detection) -> FaceSquares:
    """The top face of a detected die as one or two rotated squares to read: its own outline where its
    colour shows it and its size agrees with the detector's; else the detector's square turned and
    shrunk to the face's edges, followed by the outline when there is one (the detector sizes a die
    with a lone pip on a dark tray too small at times, an outline takes in a shadow at others), or by
    the outer end of one that takes in a side face as well (outer_end)."""
    blob = look_round(frame, spot.box)
    refined = refine_box(blob)
    outline = None
    if refined is not None:
        side = math.sqrt(refined.size[0] * refined.size[1])
        outline = FaceBox(refined.centre, (side, side), refined.angle)
        # A face's own square is 0.71 (turned 45 degrees) to 1 times the upright one round it.
        if 0.55 * spot.size <= side <= 1.2 * spot.size:
            return FaceSquares([outline], outline, blob)
    centre, (whole, _), turn = detector_square(frame, spot)
    side = whole / (abs(math.cos(math.radians(turn))) + abs(math.sin(math.radians(turn))))
    squares = [FaceBox(centre, (side, side), turn)] + ([outline] if outline else [])
    if outline is None and (top_face := outer_end(frame, spot, blob)) is not None:
        squares.append(top_face)
    return FaceSquares(squares, outline, blob)


def turn_between(first: tuple[float, float], second: tuple[float, float]) -> float:
    """The angle between two directions in the frame, in degrees, 0 to 180."""
    return math.degrees(abs(math.atan2(first[0] * second[1] - first[1] * second[0],
                                       first[0] * second[0] + first[1] * second[1])))


def outer_end(frame: np.ndarray, spot: Detection, blob: Blob | None) -> FaceBox | None:
    """The top face of a die whose outline takes in one side face too, turned to the frame's centre
    (END_TURN): the end of the outline further from the centre. None for any other outline."""
    ends = end_squares(blob)
    # The detector sizes the whole die, side face and all: the top face is half of it to all of it.
    if len(ends) != 2 or not 0.5 * spot.size <= ends[0].size[0] <= 1.2 * spot.size:
        return None
    height, width = frame.shape[:2]
    inner, outer = sorted(ends, key=lambda end: math.hypot(end.centre[0] - width / 2, end.centre[1] - height / 2))
    axis = (outer.centre[0] - inner.centre[0], outer.centre[1] - inner.centre[1])
    outward = (spot.x - width / 2, spot.y - height / 2)
    return outer if turn_between(axis, outward) <= END_TURN else None


def detector_square(frame: np.ndarray, spot: Detection) -> FaceBox:
    """The detector's upright square round a die, turned to line up with its face but not shrunk to it:
    it takes in the whole die, side faces and all, as the photos' labels the classifier learnt from do."""
    (window,) = crop_faces(frame, [spot.box], size=FACE_PX, margin=1.0)
    return FaceBox((spot.x, spot.y), (spot.size, spot.size), face_angle(window) % 90.0)


def surest(boxes: list[FaceBox], opinions: list[Opinion]) -> tuple[FaceBox, Opinion]:
    """Of the candidate squares of one die, the one read surest: a face value over "not a face", then
    the higher confidence; the first on a tie."""
    return max(zip(boxes, opinions), key=lambda pair: (pair[1][0] is not None, pair[1][1]))


def on_face(box: FaceBox, x: float, y: float) -> bool:
    """Whether the point (x, y) lies on the rotated square face `box`."""
    (cx, cy), (side, _), angle = box
    turn = math.radians(angle)
    along = (x - cx) * math.cos(turn) + (y - cy) * math.sin(turn)
    across = -(x - cx) * math.sin(turn) + (y - cy) * math.cos(turn)
    return max(abs(along), abs(across)) <= side / 2


def distinct_dice(spots: list[Detection], boxes: list[FaceBox]) -> list[int]:
    """Indices of the spots (strongest first) that are dice of their own. The top faces of dice lying
    flat are all at one height, so they never overlap in the picture: a spot on a stronger spot's face
    is that die found twice (a corner pip of a three read as a one, for instance)."""
    kept: list[int] = []
    for index, spot in enumerate(spots):
        if not any(on_face(boxes[other], spot.x, spot.y) for other in kept):
            kept.append(index)
    return kept


def with_large_dice(dice: list[FoundDie], large: list[FoundDie]) -> list[FoundDie]:
    """The dice, with each large die of the detector's coarser looks that the classifier reads surely
    in place of the dice found on its face: its pips, which the first look takes for dice, or the die
    itself found faintly. A die read as surely as the reader would take its value keeps the large one
    out when it is the large die itself, or a die of its own: read as a face other than one, or as a
    one with a square face of its own (then the large one is something shaped like a die at that
    scale: two dice on a dark tray are a two)."""
    def keeps_it_out(die: FoundDie, big: FoundDie) -> bool:
        if die.opinion is None or not takes_alone(die.spot, die.opinion):
            return False
        return (_same_die(die.spot, big.spot, big.box) or die.opinion.value != 1
                or refine_box(die.blob) is not None)

    for big in large:
        if big.opinion is None or big.opinion.value is None or big.opinion.confidence < CLASSIFIER_ALONE:
            continue
        on_it = [index for index, die in enumerate(dice) if on_face(big.box, die.spot.x, die.spot.y)]
        if any(keeps_it_out(dice[index], big) for index in on_it):
            continue
        dice = [die for index, die in enumerate(dice) if index not in on_it] + [big]
    return dice


def _same_die(spot: Detection, big: Detection, face: FaceBox) -> bool:
    """Whether the first look's spot is the large die itself: near its face's centre and nearly its
    size. (The first look sizes a large die's pips wildly, up to two thirds of the die, but off the
    centre but for the middle pip of a one, three or five.)"""
    (cx, cy), (side, _), _ = face
    return math.dist((spot.x, spot.y), (cx, cy)) <= 0.25 * side and spot.size >= 0.6 * big.size


def tray_view(frame: np.ndarray, tray: Tray | None) -> tuple[np.ndarray, int, int]:
    """The part of the frame dice are looked for in, and its top-left corner: the tray and its rim, or
    the whole frame."""
    if tray is None:
        return frame, 0, 0
    left, top, right, bottom = tray.bounds(frame.shape[1], frame.shape[0])
    return frame[top:bottom, left:right], left, top


def read_in_detector_squares(frame: np.ndarray, dice: list[FoundDie], classifier: FaceClassifier | None = None,
                             tray: Tray | None = None) -> list[FoundDie]:
    """The dice, where a face not read surely enough to be taken alone is read again (stage 5), each
    step only while it stays doubtful:
    - in the detector's square round the whole die, in its four quarter turns: the photos' labels the
      classifier learnt box the whole die, and a tight outline shows a dark die's dim pips too small.
      Only a value is taken from there (that square takes in side faces and tray, so its "no face" says
      nothing of the face), and only after the large dice took the place of their pips. Where both
      squares read one value, each from SQUARES_AGREE_MIN, their confidences combine, but only for a
      die standing apart (stands_apart): a cocked die's slanted face reads alike in both;
    - for a die standing apart read as a value from MOVED_FROM, moved outward (OUTWARD_SHIFTS), then
      in squares of other sizes (RESIZED): a value read there as surely as one taken alone is kept.
    A square is read in all four turns only while a value read there could still be of use
    (FaceClassifier.values_in_views): where many dice are doubtful, the network takes most of the time."""
    classifier = classifier or default_classifier()
    doubtful = [index for index, die in enumerate(dice) if die.confidence < alone_from(die.spot)]
    apart = {index: stands_apart(dice, index, tray) for index in doubtful}
    # A value read in the detector's square is of use where it is surer than the face's own, or agrees
    # with it from SQUARES_AGREE_MIN.
    least = [min(dice[index].confidence, SQUARES_AGREE_MIN)
             if apart[index] and reads_a_value(dice[index].opinion, SQUARES_AGREE_MIN) else dice[index].confidence
             for index in doubtful]
    in_squares = classifier.values_in_views(frame, [detector_square(frame, dice[index].spot) for index in doubtful],
                                            least)
    dice = list(dice)
    for index, in_square in zip(doubtful, in_squares):
        value, confidence = in_square or Opinion(None, 0.0)
        first = dice[index].opinion
        if (value is not None and first is not None and first.value == value and apart[index]
                and min(confidence, first.confidence) >= SQUARES_AGREE_MIN):
            confidence = agreed(confidence, first.confidence)
        if value is not None and confidence > dice[index].confidence:
            # Read in the detector's square, the value owes nothing to an outline far wider than the dice.
            dice[index] = replace(dice[index], opinion=Opinion(value, confidence), outlined=False)
    moved = likely_and_doubtful(dice, [index for index in doubtful if apart[index]])
    dice = read_in_other_squares(frame, dice, moved, [moved_outward(frame, dice[index].box) for index in moved],
                                 classifier)
    unsized = likely_and_doubtful(dice, moved)
    return read_in_other_squares(frame, dice, unsized, [resized(dice[index].box) for index in unsized], classifier)


def likely_and_doubtful(dice: list[FoundDie], indices: list[int]) -> list[int]:
    """Those of the dice at `indices` read as a value from MOVED_FROM, but not surely enough to be taken."""
    return [index for index in indices if reads_a_value(dice[index].opinion, MOVED_FROM)
            and not takes_alone(dice[index].spot, dice[index].opinion)]


def read_in_other_squares(frame: np.ndarray, dice: list[FoundDie], indices: list[int],
                          squares: list[list[FaceBox]], classifier: FaceClassifier) -> list[FoundDie]:
    """The dice, where the faces at `indices` are read again in their other `squares` (a list for each),
    and a value read there as surely as the reader takes one alone is kept."""
    opinions = iter(classifier.values_in_views(
        frame, [square for group in squares for square in group],
        [alone_from(dice[index].spot) for index, group in zip(indices, squares) for _ in group]))
    dice = list(dice)
    for index, group in zip(indices, squares):
        for value, confidence in [next(opinions) or Opinion(None, 0.0) for _ in group]:
            if value is not None and confidence > dice[index].confidence and confidence >= alone_from(dice[index].spot):
                dice[index] = replace(dice[index], opinion=Opinion(value, confidence))
    return dice


def resized(box: FaceBox) -> list[FaceBox]:
    """A face's square grown or shrunk about its centre to each of RESIZED of its side."""
    (x, y), (side, _), angle = box
    return [FaceBox((x, y), (share * side, share * side), angle) for share in RESIZED]


def moved_outward(frame: np.ndarray, box: FaceBox) -> list[FaceBox]:
    """A face's square moved away from the frame's centre by each of OUTWARD_SHIFTS of its side; none
    for a face within its side of the centre, whose side faces hardly show."""
    (x, y), (side, _), angle = box
    away_x, away_y = x - frame.shape[1] / 2, y - frame.shape[0] / 2
    distance = math.hypot(away_x, away_y)
    if distance < side:
        return []
    return [FaceBox((x + share * side * away_x / distance, y + share * side * away_y / distance), (side, side), angle)
            for share in OUTWARD_SHIFTS]


def read_with_pips(frame: np.ndarray, spot: Detection, box: FaceBox, opinion: Opinion | None,
                   alone: float) -> tuple[Opinion, int]:
    """A doubtful face's value where the pip count agrees with the classifier (or the pip count's alone
    without it; the classifier's alone from `alone`), and the number of pips counted in the face's own
    square."""
    classical = count_pips(frame, box)
    value, confidence = combine(classical, opinion, alone)
    if value is None and opinion is not None and opinion.value is not None:
        # The outline may take in only part of the face (a lit corner, a dark die's dim face), or
        # cut off its outer pips (the face lies further out): the pips counted in the detector's
        # square round the whole die, or in the face's square moved outward where that shows
        # more pips (moved off a whole face, it cuts some off), may agree with the classifier.
        moved = (count_pips(frame, square) for square in moved_outward(frame, box))
        counts = chain([count_pips(frame, detector_square(frame, spot))],
                       (count for count in moved if count.pip_count > classical.pip_count))
        for count in counts:
            value, confidence = combine(count, opinion, alone)
            if value is not None:
                break
    return Opinion(value, confidence), classical.pip_count


def distance_between(one: FoundDie, other: FoundDie) -> float:
    """How far apart two dice were found, centre to centre, in frame pixels."""
    return math.dist((one.spot.x, one.spot.y), (other.spot.x, other.spot.y))


def is_shadow_of_a_die(frame: np.ndarray, dice: list[FoundDie], index: int) -> bool:
    """Whether a die found at `index` is another die's shadow: the floor in shade (is_floor_in_shade),
    read by the classifier as no face, without a pip in its face's square or the detector's, within
    SHADOW_REACH of a die whose face it reads as a value from AGREEMENT_MIN. A lamp low at the side casts
    a shadow as large as the die, as dark and as straight-edged (renders n1, dice on a bare desk)."""
    die = dice[index]
    if die.opinion is None or die.opinion.value is not None:
        return False
    reach = SHADOW_REACH * die.box.size[0]
    beside_a_die = any(reads_a_value(other.opinion, AGREEMENT_MIN)
                       and distance_between(other, die) < reach
                       for position, other in enumerate(dice) if position != index)
    return beside_a_die and is_shade(frame, die)


def is_shade(frame: np.ndarray, die: FoundDie) -> bool:
    """Whether a find is the floor in shade (is_floor_in_shade) without a pip in its face's square or
    the detector's."""
    return (is_floor_in_shade(die.blob) and count_pips(frame, die.box).pip_count == 0
            and count_pips(frame, detector_square(frame, die.spot)).pip_count == 0)


def way_from(die: FoundDie, other: FoundDie) -> tuple[float, float]:
    """Where `other` lies from `die`, in the die's face sides."""
    side = die.box.size[0]
    return (other.spot.x - die.spot.x) / side, (other.spot.y - die.spot.y) / side


class Beside(NamedTuple):
    """Where a found die lies beside another, in frame pixels: how far from it, how far the other lies
    from the frame's centre (and that as a share of the frame's half diagonal), and how many degrees
    the way from the other to the die turns off the other's way to the frame's centre."""

    distance: float
    from_centre: float
    out: float
    turn: float


def beside(frame: np.ndarray, die: FoundDie, other: FoundDie) -> Beside:
    """Where `die` lies beside `other` (Beside)."""
    centre = (frame.shape[1] / 2, frame.shape[0] / 2)
    offset = (die.spot.x - other.spot.x, die.spot.y - other.spot.y)
    inward = (centre[0] - other.spot.x, centre[1] - other.spot.y)
    from_centre = math.hypot(*inward)
    return Beside(distance_between(die, other), from_centre, from_centre / math.hypot(*centre),
                  turn_between(offset, inward))


def shadow_cast(frame: np.ndarray, dice: list[FoundDie], index: int) -> tuple[float, float] | None:
    """Where a die's shadow found at `index` lies from the die that casts it (is_shadow_of_a_die: the
    nearest die read as a value), in that die's face sides; None for a find that is no such shadow."""
    if not is_shadow_of_a_die(frame, dice, index):
        return None
    shadow = dice[index]
    die = min((other for other in dice if reads_a_value(other.opinion, AGREEMENT_MIN)),
              key=lambda other: distance_between(other, shadow))
    return way_from(die, shadow)


def is_shadow_as_the_others_are(frame: np.ndarray, dice: list[FoundDie], index: int) -> bool:
    """Whether a find guessed at as a value (below AGREEMENT_MIN), but otherwise as a die's shadow is
    (is_shadow_of_a_die), lies from a die read as a value as another die's shadow found in the frame
    lies from its die: within SHADOW_TURN degrees of its way and SHADOW_LENGTHS times its length. One
    lamp casts every shadow of a frame the same way; a long shadow's dark floor is guessed at as a two
    or a five at 0.2 to 0.3 (renders x2 951041, 951042, a webcam over a desk)."""
    find = dice[index]
    guessed = find.opinion is not None and find.opinion.value is not None
    if not guessed or reads_a_value(find.opinion, AGREEMENT_MIN) or not is_shade(frame, find):
        return False
    cast = [way for position in range(len(dice)) if position != index
            and (way := shadow_cast(frame, dice, position)) is not None]
    ways = [way_from(die, find) for die in dice if die is not find and reads_a_value(die.opinion, AGREEMENT_MIN)]
    return any(math.hypot(*way) <= SHADOW_REACH and turn_between(way, shadow) <= SHADOW_TURN
               and 1 / SHADOW_LENGTHS <= math.hypot(*way) / math.hypot(*shadow) <= SHADOW_LENGTHS
               for way in ways for shadow in cast)


def is_side_face_of_a_die(frame: np.ndarray, dice: list[FoundDie], index: int) -> bool:
    """Whether a die found at `index`, read by the classifier as no face, is the side face of a die read
    beside it, between it and the frame's centre: much smaller than a die read surely, so near a die
    read as a value that it overlaps it (SIDE_FACE_NEAR), or found faintly beside a die near the
    frame's edge (EDGE_SHARE), which shows the camera a side face as large as a die. Only a faint find
    beside such a die may be read as a value, not surely, and still be its side face."""
    die = dice[index]
    faint = die.spot.score < SURE
    if die.opinion is None or (die.opinion.value is not None and not faint):
        return False
    guessed = die.opinion.value is not None

    def shows_it(other: FoundDie) -> bool:
        size = other.spot.size
        where = beside(frame, die, other)
        read = reads_a_value(other.opinion, AGREEMENT_MIN)
        beside_an_edge_die = (faint and read and where.distance <= EDGE_SIDE_FACE_NEAR * size
                              and where.out >= EDGE_SHARE)
        if guessed and not beside_an_edge_die:
            return False
        overlaps = where.distance <= SIDE_FACE_NEAR * size and read
        smaller = takes_alone(other.spot, other.opinion) and die.spot.size <= SIDE_FACE_SIZE * size
        if (not (overlaps or smaller or beside_an_edge_die) or where.distance > SIDE_FACE_REACH * size
                or where.from_centre < size):
            return False
        return where.turn <= SIDE_FACE_TURN

    return any(shows_it(other) for position, other in enumerate(dice) if position != index)


def edge_die_it_lies_beside(frame: np.ndarray, dice: list[FoundDie], index: int) -> FoundDie | None:
    """The die found more surely near the frame's edge (EDGE_SHARE), read alone, that a die found at
    `index` lies beside, between it and the frame's centre, within EDGE_SIDE_FACE_REACH of its face
    side, where a wide lens shows that die's side face, pips and all, as large as a die; None for none.
    The classifier reads such a side face as a face (renders w2 948134, 948143; x4 954145)."""
    die = dice[index]

    def shows_it(other: FoundDie) -> bool:
        where = beside(frame, die, other)
        return (other.spot.score > die.spot.score and takes_alone(other.spot, other.opinion)
                and where.out >= EDGE_SHARE and where.distance <= EDGE_SIDE_FACE_REACH * other.box.size[0]
                and where.turn <= SIDE_FACE_TURN)

    return next((other for position, other in enumerate(dice) if position != index and shows_it(other)), None)


def maybe_a_die(x: float, y: float) -> Problem:
    """The problem of something at (x, y), in the caller's frame pixels, that may be a die."""
    return Problem(f"something at ({x:.0f}, {y:.0f}) may be a die", ProblemKind.MAYBE_DIE, where=(x, y))


def stands_apart(dice: list[FoundDie], index: int, tray: Tray | None = None) -> bool:
    """Whether no other find that may be a die (may_be_leant_on), nor the tray's edge when it is known, is
    within LEANING_REACH face sides of this die's centre: a die can lean on neither."""
    die = dice[index]
    reach = LEANING_REACH * die.box.size[0]
    if tray is not None and tray.depth(die.spot.x, die.spot.y) < reach:
        return False
    return all(distance_between(other, die) >= reach or not may_be_leant_on(other)
               for position, other in enumerate(dice) if position != index)


def may_be_leant_on(die: FoundDie) -> bool:
    """Whether a find may be a die another leans on: found surely, or read as a value from AGREEMENT_MIN.
    A faint find read as no value is most often a die's own shadow found again: beside it, a five whose
    pips and classifier agreed (0.99 and 0.79) was left unread as if it leant on it (renders w2 948104)."""
    return die.spot.score >= SURE or reads_a_value(die.opinion, AGREEMENT_MIN)


class DiceReader:
    """Reads the dice in frames of a tray with a detector and a face classifier (None: the pip count
    alone, no learned reading of faces)."""

    def __init__(self, detector: DieDetector, classifier: FaceClassifier | None):
        self.detector = detector
        self.classifier = classifier

    def read(self, image: np.ndarray, tray: TrayLike | None = None) -> Reading:
        """Every die in a BGR frame; only on the `tray` when given (x, y, width, height, or a list of
        (x, y) corners, in frame pixels; vision.tray). Positions are in the frame's pixels. A
        ValueError says what is wrong with a bad image or tray."""
        frame, scale = working_frame(image)
        tray = as_tray(tray)
        if tray is not None and scale != 1.0:
            tray = tray.scaled(scale)
        view, left, top = tray_view(frame, tray)
        sight = self.find(view, left, top, tray)
        found = self.outline_and_read(frame, sight, tray)
        taken, doubted = self.read_dim(frame, sight.dim, found)
        return self.judge(frame, found + taken, scale, tray, doubted)

    def find(self, view: np.ndarray, left: int, top: int, tray: Tray | None) -> Sight:
        """Stage 3: the detector's dice in the view, moved into frame pixels, those off the tray left out."""
        sight = self.detector.look(view)

        def placed(spots: list[Detection]) -> list[Detection]:
            moved = [replace(spot, x=spot.x + left, y=spot.y + top) for spot in spots]
            return [spot for spot in moved if tray is None or tray.holds(spot.x, spot.y)]

        return Sight(placed(sight.dice), [], placed(sight.large), placed(sight.dim))

    def outline_and_read(self, frame: np.ndarray, sight: Sight, tray: Tray | None = None) -> list[FoundDie]:
        """Stages 4 and 5: each die found once, with its face's square and the classifier's opinion."""
        candidates = [face_boxes(frame, spot) for spot in sight.dice]
        distinct = distinct_dice(sight.dice, [candidate.squares[0] for candidate in candidates])
        found = self._read_faces(frame, [sight.dice[i] for i in distinct], [candidates[i] for i in distinct])
        if sight.large and self.classifier is not None:
            large = self._read_faces(frame, sight.large, [face_boxes(frame, spot) for spot in sight.large])
            found = with_large_dice(found, large)
        if self.classifier is not None:
            found = self.read_oversized_at_typical_side(frame, found)
            found = self.read_at_dim_finds_on_face(frame, found, sight.dim)
            found = read_in_detector_squares(frame, found, self.classifier, tray)
        return found

    def read_at_dim_finds_on_face(self, frame: np.ndarray, found: list[FoundDie],
                                  dim: list[Detection]) -> list[FoundDie]:
        """The dice, where a doubtful one holds a dim find on its face, off its centre and on no other
        die's face, read again in that find's squares, and the surest kept where it reads a value surer
        than before: two dice of one colour touching are outlined as one, the square straddling both,
        while the detector sees the second die's own centre only dimly (samples/ synth_00003)."""
        assert self.classifier is not None
        found = list(found)
        for index, die in enumerate(found):
            if die.confidence >= alone_from(die.spot):
                continue
            centres = [spot for spot in dim if on_face(die.box, spot.x, spot.y)
                       and math.dist((spot.x, spot.y), die.box.centre) >= DIM_OFF_CENTRE * die.box.size[0]
                       and not any(on_face(other.box, spot.x, spot.y) for other in found if other is not die)]
            squares = [square for spot in centres for square in face_boxes(frame, spot).squares]
            if not squares:
                continue
            least = max(die.confidence, AGREEMENT_MIN)
            read = [Opinion(*(opinion or (None, 0.0)))
                    for opinion in self.classifier.values_in_views(frame, squares, [least] * len(squares))]
            box, opinion = surest(squares, read)
            if opinion.value is not None and opinion.confidence > die.confidence:
                found[index] = replace(die, box=box, opinion=opinion, outlined=False)
        return found

    def read_oversized_at_typical_side(self, frame: np.ndarray, found: list[FoundDie]) -> list[FoundDie]:
        """The dice, where one the detector sized far larger than the frame's typical die (OVERSIZED_FIND)
        and left without a value in its own squares is read again in its four quarter turns in a square
        of the typical face's side at its centre, and that square kept where it reads a value from
        AGREEMENT_MIN, surer than before."""
        assert self.classifier is not None
        typical, typical_size = typical_side(found), typical_found_size(found)
        if typical is None or typical_size is None:
            return found
        # Only a die its own squares leave without a value: where the pip count agrees with the
        # classifier there, the square round more of it read right (byler-d6 with a pair that never
        # saw it: a three found 1.7 times the dice's size beside a two).
        oversized = [index for index, die in enumerate(found) if die.spot.size >= OVERSIZED_FIND * typical_size
                     and read_with_pips(frame, die.spot, die.box, die.opinion, alone_from(die.spot))[0].value is None]
        if not oversized:
            return found
        squares = [FaceBox((found[index].spot.x, found[index].spot.y), (typical, typical), found[index].box.angle)
                   for index in oversized]
        found = list(found)
        # A value read there is of use only from AGREEMENT_MIN, where the pip count may agree with it.
        in_squares = self.classifier.values_in_views(frame, squares, [AGREEMENT_MIN] * len(squares))
        for index, square, read in zip(oversized, squares, in_squares):
            in_square = Opinion(*(read or (None, 0.0)))
            kept, _ = surest([found[index].box, square], [found[index].opinion or Opinion(None, 0.0), in_square])
            if reads_a_value(in_square, AGREEMENT_MIN) and kept is square:
                found[index] = replace(found[index], box=square, opinion=in_square, outlined=False)
        return found

    def read_dim(self, frame: np.ndarray, dim: list[Detection],
                 found: list[FoundDie]) -> tuple[list[FoundDie], list[FoundDie]]:
        """Stage 5 for the dice seen only dimly, those of the frame's dice's size on no die's face: the
        ones taken, where the classifier and the pip count read one value (never the classifier alone),
        and the ones doubted, read as a value by the classifier as surely as a die found surely is
        taken, the pip count not agreeing (a white six whose pips a lamp washes out, renders u1
        947067, read 0.87): each may be a die."""
        typical = size_of_the_dice(found)
        if self.classifier is None or not dim or typical is None:
            return [], []
        spots = [spot for spot in dim if DICE_SIZED[0] <= spot.size / typical <= DICE_SIZED[1]
                 and not any(on_face(die.box, spot.x, spot.y) for die in found)]
        candidates = [face_boxes(frame, spot) for spot in spots]
        first = self._first_sight(frame, candidates)
        # Most dim finds are read as no face at first sight: only the others are read in their views.
        likely = [index for index, (candidate, read) in enumerate(zip(candidates, first))
                  if reads_a_value(surest(candidate.squares, read)[1], AGREEMENT_MIN)]
        dice = self._read_faces(frame, [spots[index] for index in likely], [candidates[index] for index in likely],
                                [first[index] for index in likely])
        taken, doubted = [], []
        for die in dice:
            opinion, _ = read_with_pips(frame, die.spot, die.box, die.opinion, alone=math.inf)
            if opinion.value is not None:
                taken.append(replace(die, opinion=opinion))
            elif reads_a_value(die.opinion, CLASSIFIER_ALONE):
                doubted.append(die)
        return taken, doubted

    def _first_sight(self, frame: np.ndarray, candidates: list[FaceSquares]) -> list[list[Opinion]]:
        """The classifier's opinion of each candidate square of each die, at first sight."""
        assert self.classifier is not None
        opinions = iter(Opinion(*opinion) for opinion in self.classifier.classify(
            frame, [box for candidate in candidates for box in candidate.squares], turned=True, second_look=False))
        return [[next(opinions) for _ in candidate.squares] for candidate in candidates]

    def _read_faces(self, frame: np.ndarray, spots: list[Detection], candidates: list[FaceSquares],
                    first: list[list[Opinion]] | None = None) -> list[FoundDie]:
        """Each die with the square of its top face and the classifier's opinion of it: of its candidate
        squares the one read most surely at first sight, read again in its eight views if doubtful.
        Where two squares read different values, both are read again in their views and the surer kept
        (an outline taking in a die's shadow and its neighbour read a five as a six surely at first
        sight only); where both still read their values as surely as one is taken alone, neither is,
        and the face is left to read_in_detector_squares. `first`: the squares' first-sight opinions,
        when already read."""
        if self.classifier is None:
            return [FoundDie(spot, squares[0], None, squares[0] == outline, blob)
                    for spot, (squares, outline, blob) in zip(spots, candidates)]
        first = first if first is not None else self._first_sight(frame, candidates)
        found, disputed = [], []
        for index, (spot, (squares, outline, blob), read) in enumerate(zip(spots, candidates, first)):
            box, opinion = surest(squares, read)
            found.append(FoundDie(spot, box, opinion, box == outline, blob))
            if len({value for value, _ in read if value is not None}) > 1:
                disputed.append(index)
        doubtful = [index for index, die in enumerate(found) if die.confidence < SECOND_LOOK_BELOW
                    and index not in disputed]
        squares = [found[index].box for index in doubtful] + [box for index in disputed
                                                              for box in candidates[index].squares]
        again = iter(Opinion(*opinion) for opinion in self.classifier.classify_in_views(frame, squares))
        for index in doubtful:
            found[index] = replace(found[index], opinion=next(again))
        for index in disputed:
            in_views = [next(again) for _ in candidates[index].squares]
            box, opinion = surest(candidates[index].squares, in_views)
            if len({read.value for read in in_views if reads_a_value(read, CLASSIFIER_ALONE)}) > 1:
                opinion = Opinion(None, 0.0)
            found[index] = replace(found[index], box=box, opinion=opinion, outlined=box == candidates[index].outline)
        return found

    def judge(self, frame: np.ndarray, found: list[FoundDie], scale: float = 1.0, tray: Tray | None = None,
              doubted_dim: Sequence[FoundDie] = ()) -> Reading:
        """Stage 6: each die's value, where the classifier is sure (surer for an outline far wider than
        the frame's typical die) or the pip count agrees with it (for a die found surely, only where it
        has nothing to lean on), none on bare floor nor for a faint find much smaller than the frame's
        dice (one under half their size left unread, found surely or not, is asked about only as a
        faint find is), nor for a value read beside a die near the frame's edge where that die's side
        face shows (asked about where the pips agree but it lies nearer than a flat die can), and a
        problem for each die left unread;
        positions in the caller's frame (`scale`: how much the frame read was shrunk)."""
        dice: list[Die] = []
        problems: list[Problem] = []
        typical, typical_size = typical_side(found), typical_found_size(found)
        for index, die in enumerate(found):
            spot, box, opinion = die.spot, die.box, die.opinion
            x, y, side = spot.x / scale, spot.y / scale, box.size[0] / scale
            alone = taken_alone_from(die, typical)
            if reads_a_value(opinion, alone):
                # The pip count could only agree: spare it (most dice of a clear throw are read so).
                assert opinion is not None
                value, confidence, pips_seen = opinion.value, opinion.confidence, 0
                edge_die = edge_die_it_lies_beside(frame, found, index)
                if edge_die is not None:
                    if count_pips(frame, box).value != value:
                        continue  # its side face, as is_side_face_of_a_die lets be: taken, a die too many
                    if distance_between(die, edge_die) < EDGE_SIDE_FACE_CLOSE * edge_die.box.size[0]:
                        problems.append(maybe_a_die(x, y))  # nearer than a flat die: its side face, or cocked
                        continue
            elif opinion is not None and spot.score >= SURE and not stands_apart(found, index, tray):
                # A die cocked on another (or the wall) shows its slanted top face's pips to the pip
                # count and the classifier alike: their agreement is no sign it lies flat. A die found
                # only faintly keeps it: dice touching on a dark tray are found so.
                value, confidence, pips_seen = None, 0.0, 0
            else:
                (value, confidence), pips_seen = read_with_pips(frame, spot, box, opinion, alone)
            if spot.score < SURE and smaller_than_the_dice(spot, typical_size):
                value, confidence = None, 0.0  # part of a face or a side face (DICE_SIZED): it may be a die
            if value is not None and is_bare_floor(die.blob):
                continue  # specks of dust read as a face (a two, in an underexposed frame): no die there
            said = f"({x:.0f}, {y:.0f})"
            if value is None and (is_no_die(die.blob, spot.box) or is_wide_disc(frame, spot.box)
                                  or is_shadow_of_a_die(frame, found, index)
                                  or is_shadow_as_the_others_are(frame, found, index)
                                  or is_side_face_of_a_die(frame, found, index)):
                continue  # a screw head, a coin, a glare spot, a speck of dust, a shadow, a side face: no die
            if value is None and (spot.score < SURE or smaller_than_the_dice(spot, typical_size, PART_OF_A_DIE)):
                # A faint peak (or a find far smaller than the dice) without a face's pips, or one the
                # classifier is sure is no face, is a screw head, a crumb, a pattern: nothing to say.
                # Otherwise it may be a die; so too when the classifier reads a face as surely as it
                # would take one found surely, pips or not (a face blown out under glare, a die in a dim
                # corner, left out without a word).
                surely_no_face = (opinion is not None and opinion.value is None
                                  and opinion.confidence >= CLASSIFIER_ALONE)
                if (pips_seen > 0 and not surely_no_face) or reads_a_value(opinion, CLASSIFIER_ALONE):
                    problems.append(maybe_a_die(x, y))
                continue
            dice.append(Die(value, x, y, side, box.angle, round(min(max(confidence, 0.0), 1.0), 3)))
            if value is None:
                problems.append(Problem(f"the die at {said} could not be read", ProblemKind.UNREADABLE, where=(x, y)))
            elif confidence < MIN_CONFIDENCE:
                problems.append(Problem(f"the die at {said} looks like {value} but not surely", ProblemKind.DOUBTFUL,
                                        value, (x, y)))
        for die in doubted_dim:
            if not (is_bare_floor(die.blob) or is_no_die(die.blob, die.spot.box)):
                x, y = die.spot.x / scale, die.spot.y / scale
                problems.append(maybe_a_die(x, y))
        dice.sort(key=lambda d: (d.y, d.x))
        return Reading(tuple(dice), "unsure" if problems else "ok", tuple(problems))


@functools.cache
def default_reader(use_classifier: bool = True) -> DiceReader:
    """The reader with the packaged networks (loaded on first use); without the classifier, the pip
    count alone reads the faces."""
    return DiceReader(default_detector(), default_classifier() if use_classifier else None)


def read_dice(image: np.ndarray, use_classifier: bool = True, tray: TrayLike | None = None) -> Reading:
    """Read every die in a BGR frame with the packaged networks; only on the `tray` when given (x, y,
    width, height, or a list of (x, y) corners: the calibrated tray). A ValueError says what is wrong
    with a bad image."""
    return default_reader(use_classifier).read(image, tray)


def prepare() -> None:
    """Do the one-time set-up now, so the first frame read is not slowed by it: OpenCV builds its
    Lab conversion tables on first use (half a second) and the networks load.
    For a camera loop or a command that times its readings."""
    cv2.cvtColor(np.zeros((2, 2, 3), np.uint8), cv2.COLOR_BGR2LAB)
    default_detector().look(np.zeros((240, 320, 3), np.uint8))
    default_classifier().logits(np.zeros((1, 3, CROP_SIZE, CROP_SIZE), np.float32))
