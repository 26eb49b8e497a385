"""Every picture in samples/ read the way the table reads a camera frame: `vision.read_dice` on the
decoded image.

Held without exception: every clear picture is read ok and exactly, no die is ever given a wrong
value, no picture is read as ok with the wrong dice, and a picture with a hand, a cocked die or motion
blur is never read as ok but wrong; a hand is said to be one.
"""

from pathlib import Path

import cv2
import pytest

import vision
from vision.labelled import load_folder, score

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
LABELS = load_folder(SAMPLES) if (SAMPLES / "manifest.csv").exists() else []


def test_there_are_samples_of_both_kinds():
    assert len(LABELS) >= 50, "samples/manifest.csv is missing or short: python -m vision.synth --out samples --sequences"
    assert {label.expected_status for label in LABELS} == {"ok", "unsure"}


@pytest.fixture(scope="module")
def scores():
    result = {}
    for label in LABELS:
        image = cv2.imread(str(label.path))
        assert image is not None, f"{label.path.name} does not decode"
        reading = vision.read_dice(image)
        result[label.path.name] = (label, score(reading, label, image.shape[1], image.shape[0]), reading)
    return result


def test_no_die_is_ever_given_a_wrong_value(scores):
    misread = {name: s.dice_misread for name, (_, s, _) in scores.items() if s.dice_misread}
    assert misread == {}


def test_distraction_pictures_are_never_read_ok_but_wrong(scores):
    wrong = [name for name, (label, s, _) in scores.items() if label.expected_status == "unsure" and s.silent_wrong]
    assert wrong == []


def test_every_clear_picture_is_read_ok_and_exactly(scores):
    missed = sorted(name for name, (label, s, _) in scores.items()
                    if label.expected_status == "ok" and not (s.exact and not s.unsure))
    assert missed == []


def test_no_picture_is_read_ok_but_wrong(scores):
    silent = sorted(name for name, (_, s, _) in scores.items() if s.silent_wrong)
    assert silent == []


def test_a_hand_in_view_is_said_to_be_one(scores):
    """The tablet words each problem by its kind, and the picture shows where: a hand must not come out
    as "a die could not be read"."""
    hands = {name: {problem.kind for problem in reading.problems if problem.where is not None}
             for name, (_, _, reading) in scores.items() if "_hand" in name}
    assert hands and all("foreign" in kinds for kinds in hands.values()), hands
