"""The reader on real photographs (the shared byler-d6 test split, its two known label errors set
right): floors a little below what was measured (docs/reader.md), so a change that makes the reader
worse on real dice fails here. The classifier learnt translucent and rendered dice too, and reads this
split less well than one fitted to byler-d6 alone did (302 dice, 45 pictures); trained without
byler-d6, that mix reads byler-d6 better than the same training without renders (docs/training.md)."""

from pathlib import Path

import cv2
import pytest

import vision
from vision.labelled import load_folder, score

BYLER = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets" / "byler-d6"


@pytest.fixture(scope="module")
def test_split_readings():
    if not (BYLER / "manifest.csv").is_file():
        pytest.skip(f"the shared photo set is not here: {BYLER}")
    readings = []
    for label in load_folder(BYLER, split="test"):
        image = cv2.imread(str(label.path))
        assert image is not None, f"{label.path} does not decode"
        readings.append((label, image, vision.read_dice(image)))
    return readings


@pytest.fixture(scope="module")
def test_split_scores(test_split_readings):
    return [score(reading, label, image.shape[1], image.shape[0]) for label, image, reading in test_split_readings]


def test_the_whole_test_split_is_read(test_split_scores):
    assert len(test_split_scores) == 50


def test_per_die_accuracy_floor(test_split_scores):
    right = sum(s.dice_right for s in test_split_scores)
    labelled = sum(s.dice_labelled for s in test_split_scores)
    assert right / labelled >= 0.96, f"{right} of {labelled} dice read right (measured 299 of 308)"


def test_exact_read_floor(test_split_scores):
    exact = sum(s.exact for s in test_split_scores)
    assert exact >= 39, f"{exact} of 50 pictures read exactly (measured 42)"


def test_silent_wrong_ceiling(test_split_scores):
    """Wrong but "ok" is the failure that costs a player points: issue 4 allows 2 % of the pictures,
    1 of these 50. Measured 1: IMG_20191209_095526, eight dice, a dark blue three whose middle pip
    barely shows read as a two."""
    silent = [s for s in test_split_scores if s.silent_wrong]
    assert len(silent) <= 1


@pytest.mark.parametrize("photo, speck", [
    ("IMG_20191208_111924.jpg", (111, 341)),  # test split
    ("IMG_20191208_111953.jpg", (116, 342)),  # train split: the same speck, a later throw
    ("IMG_20191208_111411.jpg", (196, 423)),  # train split
])
def test_a_speck_of_dust_on_the_tray_is_no_die_showing_one(photo, speck):
    """Alone in a die-sized patch of bare tray, a speck looks like the pip of a one on a die the tray's
    colour; the classifier learnt that with no die's outline round it, it is no face."""
    if not (BYLER / "images" / photo).is_file():
        pytest.skip(f"the shared photo set is not here: {BYLER}")
    reading = vision.read_dice(cv2.imread(str(BYLER / "images" / photo)))
    near = [die for die in reading.dice if abs(die.x - speck[0]) < 15 and abs(die.y - speck[1]) < 15]
    assert [die.value for die in near if die.value is not None] == []


@pytest.mark.parametrize("photo", ["IMG_20191208_112600.jpg", "IMG_20191208_112637.jpg", "IMG_20191208_112704.jpg"])
def test_a_speck_of_dust_found_surely_raises_no_alarm(photo):
    """The same speck at (123, 339), found just surely as a die: bare floor round it, no die there."""
    if not (BYLER / "images" / photo).is_file():
        pytest.skip(f"the shared photo set is not here: {BYLER}")
    reading = vision.read_dice(cv2.imread(str(BYLER / "images" / photo)))
    assert [p for p in reading.problems if abs(p.where[0] - 123) < 15 and abs(p.where[1] - 339) < 15] == []
    assert reading.status == "ok"


SKOVY = BYLER.parent / "skovy-d6"


def test_no_alarm_on_a_webcam_desk_but_on_its_dice():
    """skovy-d6: two dice on a grey wooden table, a black case and chair legs at the edges, no hand. The wood
    grain once raised "something that is no die (a hand?)" in every frame; a problem may now only
    be about a labelled die."""
    if not (SKOVY / "manifest.csv").is_file():
        pytest.skip(f"the shared photo set is not here: {SKOVY}")
    astray = []
    for label in load_folder(SKOVY):
        image = cv2.imread(str(label.path))
        boxes = label.boxes_in_pixels(image.shape[1], image.shape[0])
        for problem in vision.read_dice(image).problems:
            x, y = problem.where
            if not any(abs(x - box.x) <= box.width / 2 and abs(y - box.y) <= box.height / 2 for box in boxes):
                astray.append((label.path.name, problem))
    assert astray == []


def test_a_die_showing_one_is_taken_for_a_die(test_split_readings):
    """A one's lone pip, large on some dice, is a die's face: every die labelled one in the byler-d6
    test split is found as a die, and no problem on one says it may be no die or only maybe one. (A
    blurred dark die may still be "could not be read": true, it is a die whose value is unknown.)"""
    def within(box, x: float, y: float) -> bool:
        return abs(x - box.x) <= box.width / 2 and abs(y - box.y) <= box.height / 2

    lost, doubted = [], []
    for label, image, reading in test_split_readings:
        ones = [box for box in label.boxes_in_pixels(image.shape[1], image.shape[0]) or () if box.value == 1]
        for box in ones:
            if not any(within(box, die.x, die.y) for die in reading.dice):
                lost.append(label.path.name)
            doubted += [(label.path.name, problem) for problem in reading.problems
                        if problem.where is not None and within(box, *problem.where)
                        and problem.kind is not vision.ProblemKind.UNREADABLE]
    assert lost == [] and doubted == []
