"""The shared image cuts: whole-pixel windows and shrinking."""

import cv2
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.imaging import frame_window, shrink

FRAME = np.random.default_rng(0).integers(0, 256, (60, 80, 3)).astype(np.uint8)


@settings(max_examples=60, deadline=None)
@given(cx=st.floats(-40, 120), cy=st.floats(-40, 100), span=st.integers(1, 50))
def test_a_window_is_the_frame_round_its_centre_with_edges_repeated(cx, cy, span):
    window, left, top = frame_window(FRAME, cx, cy, span)
    assert window.shape == (span, span, 3)
    # Centred to within half a pixel (and a rounding error: 2.2e-16 - 3.5 is -3.5 in floating point).
    assert abs(left + (span - 1) / 2 - cx) <= 0.5 + 1e-9 and abs(top + (span - 1) / 2 - cy) <= 0.5 + 1e-9
    # Each pixel is the frame's pixel there, or the nearest edge pixel beyond the frame.
    rows = np.clip(np.arange(top, top + span), 0, FRAME.shape[0] - 1)
    columns = np.clip(np.arange(left, left + span), 0, FRAME.shape[1] - 1)
    assert np.array_equal(window, FRAME[rows][:, columns])


@settings(max_examples=40, deadline=None)
@given(width=st.integers(4, 300), height=st.integers(4, 300), scale=st.floats(1.0, 9.0))
def test_shrinking_gives_the_size_asked_and_keeps_a_flat_image_flat(width, height, scale):
    image = np.full((max(round(height * scale), height), max(round(width * scale), width), 3), 77, np.uint8)
    small = shrink(image, width, height)
    assert small.shape == (height, width, 3)
    assert np.all(small == 77)


@settings(max_examples=40, deadline=None)
@given(cx=st.floats(60, 340), cy=st.floats(60, 340), target=st.integers(24, 100))
def test_shrinking_maps_pixel_centres_as_a_resize_does(cx, cy, target):
    """The reader turns positions in a shrunk window back into frame pixels by this mapping."""
    image = np.zeros((400, 400), np.float32)
    cv2.circle(image, (round(cx * 16), round(cy * 16)), 30 * 16, 255, -1, cv2.LINE_AA, shift=4)
    image = np.repeat(image[..., None], 3, axis=2).astype(np.uint8)
    source_y, source_x = _centroid(image[..., 0].astype(float))
    small_y, small_x = _centroid(shrink(image, target, target)[..., 0].astype(float))
    k = target / 400
    assert abs(small_x - ((source_x + 0.5) * k - 0.5)) < 0.1
    assert abs(small_y - ((source_y + 0.5) * k - 0.5)) < 0.1


def _centroid(values: np.ndarray) -> tuple[float, float]:
    rows, columns = np.indices(values.shape)
    return float((rows * values).sum() / values.sum()), float((columns * values).sum() / values.sum())
