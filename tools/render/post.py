"""What the camera does to the light the renderer computed: auto-exposure and its gain, camera shake,
sensor noise (shot noise grows with the gain a dim room needs), the tone curve, and JPEG."""

from __future__ import annotations

import math

import cv2
import numpy as np

from .plan import Lens

MIDDLE_GREY = 0.18
FULL_SCALE_ELECTRONS = 4000.0


def exposure_gain(linear: np.ndarray, stops: float) -> float:
    """The gain that brings the picture's mean light to middle grey, `stops` above or below it, as a
    camera's auto-exposure does (bright highlights weigh little: the mean is of clipped values)."""
    luminance = linear @ np.array([0.2126, 0.7152, 0.0722])
    mean = float(np.clip(luminance, 0, 4 * max(float(np.median(luminance)), 1e-6)).mean())
    return MIDDLE_GREY * 2.0 ** stops / max(mean, 1e-6)


def shake(linear: np.ndarray, length: float, angle_deg: float) -> np.ndarray:
    """Motion blur along a straight line `length` px long."""
    if length < 1.0:
        return linear
    size = math.ceil(length) | 1
    kernel = np.zeros((size, size), np.float32)
    centre = size // 2
    dx, dy = math.cos(math.radians(angle_deg)) * length / 2, math.sin(math.radians(angle_deg)) * length / 2
    cv2.line(kernel, (round(centre - dx), round(centre - dy)), (round(centre + dx), round(centre + dy)), 1.0)
    return cv2.filter2D(linear, -1, kernel / kernel.sum())


def tone(linear: np.ndarray) -> np.ndarray:
    """Scene light to display values 0..1: a soft shoulder so highlights roll off as on a phone-class
    sensor's picture, then the sRGB curve."""
    x = np.maximum(linear, 0)
    x = x * (1 + x / 9.0) / (1 + x)
    return np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)


def develop(linear_rgb: np.ndarray, lens: Lens, seed: int, frame: int = 0) -> np.ndarray:
    """The BGR uint8 picture a Pi camera would deliver from the rendered scene light (H x W x 3 RGB);
    `frame` 1, 2, ... are later frames of the same still scene, each with noise of its own."""
    rng = np.random.default_rng(seed if frame == 0 else (seed, frame))
    image = shake(linear_rgb.astype(np.float32) * exposure_gain(linear_rgb, lens.exposure), *lens.motion_blur)
    # Shot noise: variance proportional to the light collected (a 1.4 um pixel holds a few thousand
    # electrons; binning to 640x480 averages many); read noise: constant. Both grow with the gain.
    shot = np.sqrt(np.maximum(image, 0) * lens.gain / FULL_SCALE_ELECTRONS)
    sigma = np.sqrt(shot ** 2 + (lens.noise * lens.gain / 4 / 255.0) ** 2)
    image = image + rng.normal(0, 1, image.shape).astype(np.float32) * sigma
    display = np.clip(tone(image), 0, 1)
    bgr = (display[..., ::-1] * 255 + 0.5).astype(np.uint8)
    return bgr


def jpeg(bgr: np.ndarray, quality: int) -> bytes:
    ok, data = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise ValueError("could not encode the picture as JPEG")
    return data.tobytes()
