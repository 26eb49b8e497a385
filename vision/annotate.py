"""Draw a reading over its frame: each die's outline, value and confidence, where something may be a
die or is no die, and the status."""

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
    for die in reading.dice:
        colour = _UNKNOWN if die.value is None else (_SURE if die.confidence >= 0.5 else _DOUBT)
        outline = np.round(np.array(die.outline)).astype(np.int32)
        cv2.polylines(canvas, [outline], True, colour, thickness, cv2.LINE_AA)
        # The value large enough to check at a glance on a tablet, its confidence small beside it.
        top = int(min(y for _, y in die.outline)) - 4
        x, y = int(die.x - die.size / 2), max(top, int(22 * scale))
        x = _write(canvas, "?" if die.value is None else str(die.value), (x, y), 0.9 * scale, colour, thickness)
        _write(canvas, f" {die.confidence:.2f}", (x, y), 0.45 * scale, colour, max(1, thickness - 1))
    # Where something may be a die, or is no die (a hand): the dice found are drawn above, but these
    # are not dice, and the tablet's words do not say where.
    for problem in reading.problems:
        if problem.where is None or problem.kind not in ("maybe_die", "foreign"):
            continue
        centre = tuple(int(round(c)) for c in problem.where)
        if problem.kind == "maybe_die":
            cv2.circle(canvas, centre, int(24 * scale), _DOUBT, thickness, cv2.LINE_AA)
            _write(canvas, "?", (centre[0] - int(8 * scale), centre[1] + int(9 * scale)), 0.9 * scale, _DOUBT,
                   thickness)
        else:
            cv2.drawMarker(canvas, centre, (0, 0, 0), cv2.MARKER_TILTED_CROSS, int(48 * scale), thickness + 2)
            cv2.drawMarker(canvas, centre, _DOUBT, cv2.MARKER_TILTED_CROSS, int(48 * scale), thickness)
    summary = f"{reading.status}: {' '.join(map(str, reading.values)) or 'no dice'}"
    banner = _SURE if reading.status == "ok" else _DOUBT
    _write(canvas, summary, (int(8 * scale), int(22 * scale)), 0.7 * scale, banner, thickness)
    return canvas


def _write(canvas: np.ndarray, text: str, origin: tuple[int, int], font_scale: float,
           colour: tuple[int, int, int], thickness: int) -> int:
    """Text outlined in black so it reads on any tray; returns the x where it ends."""
    for ink, width in (((0, 0, 0), thickness + 1), (colour, thickness)):
        cv2.putText(canvas, text, origin, cv2.FONT_HERSHEY_SIMPLEX, font_scale, ink, width, cv2.LINE_AA)
    (text_width, _), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, font_scale, thickness)
    return origin[0] + text_width
