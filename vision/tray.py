"""Where the tray lies in a frame: the only place the reader looks for dice.

A tray is a polygon in frame pixels: a rectangle (x, y, width, height), as `yacht-table calibrate`
stores it, or any outline of three or more corners (a round or tilted tray). Whatever lies outside it
(the tray's rim and clips, the table, a cable, a laptop) is never read and never makes a reading unsure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

# Dice are looked for this share of the tray's size beyond its outline: a die's top face, nearer the
# camera than the floor it lies on, shows a little outside that floor when the camera is not overhead.
RIM = 0.05
# A tray (with its rim, within the frame) narrower than this many pixels is a mistake, not a tray.
MIN_TRAY_PX = 32


@dataclass(frozen=True)
class Tray:
    corners: tuple[tuple[float, float], ...]

    def __post_init__(self) -> None:
        if len(self.corners) < 3:
            raise ValueError(f"a tray outline needs at least 3 corners, got {len(self.corners)}")
        if cv2.contourArea(self._contour()) <= 0:
            raise ValueError("a tray outline must enclose an area")

    @classmethod
    def rectangle(cls, x: float, y: float, width: float, height: float) -> Tray:
        if width <= 0 or height <= 0:
            raise ValueError(f"a tray rectangle needs a positive width and height, got {width}x{height}")
        return cls(((x, y), (x + width, y), (x + width, y + height), (x, y + height)))

    @classmethod
    def parse(cls, text: str) -> Tray:
        """`x,y,w,h` (a rectangle) or `x1,y1,x2,y2,x3,y3,...` (an outline), numbers in frame pixels."""
        try:
            numbers = [float(part) for part in text.replace(";", ",").split(",") if part.strip()]
        except ValueError:
            raise ValueError(f"a tray is x,y,width,height or x1,y1,x2,y2,x3,y3,... in pixels, got {text!r}") from None
        if len(numbers) == 4:
            return cls.rectangle(*numbers)
        if len(numbers) >= 6 and len(numbers) % 2 == 0:
            return cls(tuple(zip(numbers[::2], numbers[1::2])))
        raise ValueError(f"a tray is x,y,width,height or x1,y1,x2,y2,x3,y3,... in pixels, got {text!r}")

    def scaled(self, factor: float) -> Tray:
        return Tray(tuple((x * factor, y * factor) for x, y in self.corners))

    @property
    def rim(self) -> float:
        x, y, width, height = cv2.boundingRect(self._contour())
        return RIM * max(width, height)

    def bounds(self, width: int, height: int) -> tuple[int, int, int, int]:
        """Left, top, right and bottom of the tray and its rim within a width x height frame, or a
        ValueError when that leaves too little of the frame to hold a die."""
        xs, ys = [x for x, _ in self.corners], [y for _, y in self.corners]
        rim = self.rim
        left, top = max(int(min(xs) - rim), 0), max(int(min(ys) - rim), 0)
        right, bottom = min(int(np.ceil(max(xs) + rim)), width), min(int(np.ceil(max(ys) + rim)), height)
        if right - left < MIN_TRAY_PX or bottom - top < MIN_TRAY_PX:
            raise ValueError(f"tray region {self.describe()} does not lie within the {width}x{height} frame")
        return left, top, right, bottom

    def holds(self, x: float, y: float) -> bool:
        """Whether a point lies inside the outline or within its rim."""
        return self.depth(x, y) >= -self.rim

    def depth(self, x: float, y: float) -> float:
        """How far a point lies inside the outline, in pixels (negative outside it)."""
        return cv2.pointPolygonTest(self._contour(), (float(x), float(y)), True)

    def describe(self) -> str:
        return "(" + ", ".join(f"{x:g},{y:g}" for x, y in self.corners) + ")"

    def _contour(self) -> np.ndarray:
        return np.array(self.corners, np.float32).reshape(-1, 1, 2)


TrayLike = Tray | Sequence[float] | Sequence[Sequence[float]]


def as_tray(tray: TrayLike | None) -> Tray | None:
    """A Tray from what a caller holds: a Tray, (x, y, width, height) or a sequence of (x, y) corners."""
    if tray is None or isinstance(tray, Tray):
        return tray
    items: list[Any] = list(tray)  # four numbers, or (x, y) pairs: told apart below
    if len(items) == 4 and all(np.isscalar(item) for item in items):
        return Tray.rectangle(*(float(item) for item in items))  # type: ignore[arg-type]
    try:
        corners = [(float(x), float(y)) for x, y in items]
        return Tray(tuple(corners))
    except (TypeError, ValueError) as error:
        raise ValueError(f"a tray is (x, y, width, height) or a list of (x, y) corners, got {tray!r}: "
                         f"{error}") from None
