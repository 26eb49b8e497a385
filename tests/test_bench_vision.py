"""The vision bench's zoomed views and changed conditions: the labels follow the dice."""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.labelled import load_folder

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_vision import CONDITIONS, ZOOM_VIEW, zoomed  # noqa: E402


@pytest.mark.parametrize("zoom", [0.6, 1.0, 1.7, 2.5])
def test_a_zoomed_view_keeps_the_labels_on_their_dice(zoom):
    kept = 0
    for label in load_folder(REPO / "samples")[:12]:
        image = cv2.imread(str(label.path))
        view, inside = zoomed(image, label, zoom)
        assert view.shape[:2] == (ZOOM_VIEW[1], ZOOM_VIEW[0])
        original = label.boxes_in_pixels(image.shape[1], image.shape[0])
        moved = inside.boxes_in_pixels(*ZOOM_VIEW)
        assert inside.values == tuple(sorted(die.value for die in moved)) and len(moved) <= len(original)
        offsets = None
        for die in moved:
            assert die.width / 2 <= die.x <= ZOOM_VIEW[0] - die.width / 2
            assert die.height / 2 <= die.y <= ZOOM_VIEW[1] - die.height / 2
            # One shift of the whole picture takes every die's label to its place in the view.
            here = {(round(o.x - die.x / zoom, 3), round(o.y - die.y / zoom, 3)) for o in original
                    if o.value == die.value and o.width * zoom == pytest.approx(die.width)}
            offsets = here if offsets is None else offsets & here
            assert offsets
            (left, top), = list(offsets)[:1]
            source = image[int(round(die.y / zoom + top)), int(round(die.x / zoom + left))].astype(int)
            assert np.abs(view[int(round(die.y)), int(round(die.x))].astype(int) - source).max() < 60
        kept += len(moved)
    assert kept > 0


@pytest.mark.parametrize("name", sorted(CONDITIONS))
def test_a_condition_changes_the_picture_the_same_way_each_time_and_keeps_its_frame(name):
    image = cv2.imread(str(REPO / "samples" / "images" / "synth_00000.jpg"))
    changed = CONDITIONS[name](image)
    assert changed.shape == image.shape and changed.dtype == np.uint8
    assert not np.array_equal(changed, image)
    assert np.array_equal(CONDITIONS[name](image), changed)


def test_exposure_conditions_darken_and_brighten():
    image = cv2.imread(str(REPO / "samples" / "images" / "synth_00000.jpg"))
    assert CONDITIONS["dark"](image).mean() < image.mean() < CONDITIONS["bright"](image).mean()
