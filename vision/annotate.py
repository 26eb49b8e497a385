"""Draw a reading over its frame: each die's outline, value and confidence, and the status."""

from __future__ import annotations

import cv2
import numpy as np

from .reading import Reading

_SURE = (60, 200, 60)
_DOUBT = (0, 165, 255)
_UNKNOWN = (40, 40, 230)


def annotate(image: np.ndarray, reading: Reading) -> np.ndarray:
    """A copy of the BGR frame with the reading drawn on it; the frame itself is left untouched."""
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim not in (2, 3):
        raise ValueError("image must be a uint8 numpy array (grey or BGR)")
    canvas = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR) if image.ndim == 2 else image[..., :3].copy()
    scale = max(canvas.shape[:2]) / 640.0
    thickness = max(1, round(1.5 * scale))
    font_scale = 0.5 * scale
    for die in reading.dice:
        colour = _UNKNOWN if die.value is None else (_SURE if die.confidence >= 0.5 else _DOUBT)
        outline = np.round(np.array(die.outline)).astype(np.int32)
        cv2.polylines(canvas, [outline], True, colour, thickness, cv2.LINE_AA)
        label = f"{'?' if die.value is None else die.value} {die.confidence:.2f}"
        top = int(min(y for _, y in die.outline)) - 4
        anchor = (int(die.x - die.size / 2), max(top, int(14 * scale)))
        cv2.putText(canvas, label, anchor, cv2.FONT_HERSHEY_SIMPLEX, font_scale, (0, 0, 0),
                    thickness + 2, cv2.LINE_AA)
        cv2.putText(canvas, label, anchor, cv2.FONT_HERSHEY_SIMPLEX, font_scale, colour,
                    thickness, cv2.LINE_AA)
    summary = f"{reading.status}: {' '.join(map(str, reading.values)) or 'no dice'}"
    banner = _SURE if reading.status == "ok" else _DOUBT
    cv2.putText(canvas, summary, (int(8 * scale), int(22 * scale)), cv2.FONT_HERSHEY_SIMPLEX,
                0.7 * scale, (0, 0, 0), thickness + 2, cv2.LINE_AA)
    cv2.putText(canvas, summary, (int(8 * scale), int(22 * scale)), cv2.FONT_HERSHEY_SIMPLEX,
                0.7 * scale, banner, thickness, cv2.LINE_AA)
    return canvas
