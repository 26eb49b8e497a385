"""The reader on real photographs (the shared byler-d6 test split): floors a little below what was
measured (README, "Reading dice"), so a change that makes the reader worse on real dice fails here."""

from pathlib import Path

import cv2
import pytest

import vision
from vision.labelled import load_folder, score

BYLER = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets" / "byler-d6"


@pytest.fixture(scope="module")
def test_split_scores():
    if not (BYLER / "manifest.csv").is_file():
        pytest.skip(f"the shared photo set is not here: {BYLER}")
    scores = []
    for label in load_folder(BYLER, split="test"):
        image = cv2.imread(str(label.path))
        assert image is not None, f"{label.path} does not decode"
        scores.append(score(vision.read_dice(image), label, image.shape[1], image.shape[0]))
    return scores


def test_the_whole_test_split_is_read(test_split_scores):
    assert len(test_split_scores) == 50


def test_per_die_accuracy_floor(test_split_scores):
    right = sum(s.dice_right for s in test_split_scores)
    labelled = sum(s.dice_labelled for s in test_split_scores)
    assert right / labelled >= 0.89, f"{right} of {labelled} dice read right (measured 282 of 308)"


def test_exact_read_floor(test_split_scores):
    exact = sum(s.exact for s in test_split_scores)
    assert exact >= 28, f"{exact} of 50 pictures read exactly (measured 31)"


def test_silent_wrong_ceiling(test_split_scores):
    """Wrong but "ok" is the failure that costs a player points. Measured 2 of 50: both are the set's
    label errors (README, "Face classifier"), where the reader is right."""
    silent = [s for s in test_split_scores if s.silent_wrong]
    assert len(silent) <= 2
