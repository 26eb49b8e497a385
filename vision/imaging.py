"""Image checks and cuts shared by the reader's stages."""

from __future__ import annotations

import cv2
import numpy as np


def as_bgr(image: np.ndarray) -> np.ndarray:
    """The image as 3-channel uint8 (grey and BGRA converted), or a ValueError saying what is wrong."""
    if not isinstance(image, np.ndarray) or image.size == 0:
        raise ValueError(f"image must be a non-empty numpy array, got {type(image).__name__}"
                         + (" of size 0" if isinstance(image, np.ndarray) else ""))
    if image.dtype != np.uint8:
        raise ValueError(f"image must be 8-bit (uint8), got {image.dtype}")
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.ndim == 3 and image.shape[2] == 3:
        return image
    if image.ndim == 3 and image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    raise ValueError(f"image must be grey, BGR or BGRA, got shape {image.shape}")


def frame_window(frame: np.ndarray, cx: float, cy: float, span: int) -> tuple[np.ndarray, int, int]:
    """The span x span whole pixels of the frame centred as nearly as they can be on (cx, cy), edge
    pixels repeated beyond the frame, and the window's top-left corner in the frame. Whole pixels:
    interpolating a window to a sub-pixel centre costs as much as the rest of a die's analysis."""
    left, top = round(cx - (span - 1) / 2), round(cy - (span - 1) / 2)
    height, width = frame.shape[:2]
    inside = frame[max(top, 0):max(min(top + span, height), 0), max(left, 0):max(min(left + span, width), 0)]
    if inside.shape[:2] == (span, span):
        return inside, left, top
    if inside.size == 0:  # wholly off the frame: the nearest edge pixels, repeated
        return cv2.getRectSubPix(frame, (span, span), (left + (span - 1) / 2, top + (span - 1) / 2)), left, top
    below, right = max(top + span - height, 0), max(left + span - width, 0)
    return cv2.copyMakeBorder(inside, max(-top, 0), below, max(-left, 0), right, cv2.BORDER_REPLICATE), left, top


def halve(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """The image halved for as long as it stays at least width x height. Bilinear halvings average
    2x2 blocks, as an area resize would, at several times less cost: OpenCV's fastest downscale."""
    while image.shape[1] >= 2 * width and image.shape[0] >= 2 * height:
        image = cv2.resize(image, (image.shape[1] // 2, image.shape[0] // 2), interpolation=cv2.INTER_LINEAR)
    return image


def shrink(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """The image scaled down to width x height, averaging the pixels each one covers: halvings first,
    then one area resize. Pixel centres map as in any cv2.resize: x to (x + 0.5) * width / image
    width - 0.5."""
    image = halve(image, width, height)
    if image.shape[:2] != (height, width):
        image = cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA)
    return image
