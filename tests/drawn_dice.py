"""Dice painted flat on a plain tray with cv2: pictures with a known answer for the reader's and the
face classifier's tests. The pip layouts are the generator's (vision.synth), so all agree."""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.synth import PIP_LAYOUTS

RotatedBox = tuple[tuple[float, float], tuple[float, float], float]


def pip_offsets(value: int) -> list[tuple[float, float]]:
    """Pip centres of a face as fractions of its side, from the face centre."""
    return [(u / 2, v / 2) for u, v in PIP_LAYOUTS[value]]


def tray(width: int = 1280, height: int = 960, colour=(60, 120, 40), seed: int | None = 0) -> np.ndarray:
    """A plain tray; with a seed, also the sensor noise and light gradient any real frame has."""
    image = np.empty((height, width, 3), np.uint8)
    image[:] = colour
    if seed is None:
        return image
    rng = np.random.default_rng(seed)
    shade = np.linspace(-15, 15, width, dtype=np.float32)[None, :, None]
    noisy = image.astype(np.float32) + shade + rng.normal(0, 3, image.shape)
    return np.clip(noisy, 0, 255).astype(np.uint8)


def draw_die(image: np.ndarray, value: int, centre: tuple[float, float], side: float, angle: float,
             body=(235, 235, 235), pips=(20, 20, 20)) -> RotatedBox:
    """Paint a die's top face (a square with its pips) and return its rotated box."""
    cx, cy = centre
    box = ((float(cx), float(cy)), (float(side), float(side)), float(angle))
    corners = cv2.boxPoints(box)
    cv2.fillPoly(image, [np.round(corners * 16).astype(np.int32)], body, cv2.LINE_AA, shift=4)
    cos_a, sin_a = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    for u, v in pip_offsets(value):
        x = cx + side * (u * cos_a - v * sin_a)
        y = cy + side * (u * sin_a + v * cos_a)
        cv2.circle(image, (round(x * 16), round(y * 16)), round(max(2.0, side * 0.09) * 16), pips, -1,
                   cv2.LINE_AA, shift=4)
    return box
