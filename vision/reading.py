"""What the reader returns: the dice it found and whether the whole reading can be trusted."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

Status = Literal["ok", "unsure"]


class ProblemKind(StrEnum):
    """What made a reading unsure, for whoever words it for the players. Each is its code (a string)."""

    FOREIGN = "foreign"  # something that is no die in the tray (a hand): the table's motion check says so
    UNREADABLE = "unreadable"  # a die found surely whose face could not be read
    DOUBTFUL = "doubtful"  # a die read, but not surely (the problem carries the value it looks like)
    MAYBE_DIE = "maybe_die"  # something found faintly that shows pips: it may be a die
    OTHER = "other"


PROBLEM_KINDS = tuple(kind.value for kind in ProblemKind)


class Problem(str):
    """One reason a reading is unsure. It is its English text (what the command line and the logs
    print, and what compares equal), with a `kind` (ProblemKind) and the half-read `value` of a
    doubtful die, so the tablet can say it in the player's language, and `where` it is in the frame
    (x, y pixels; None for the whole frame), so the annotated picture can show it."""

    kind: ProblemKind
    value: int | None
    where: tuple[float, float] | None

    def __new__(cls, text: str, kind: ProblemKind | str = ProblemKind.OTHER, value: int | None = None,
                where: tuple[float, float] | None = None) -> Problem:
        if kind not in PROBLEM_KINDS:
            raise ValueError(f"problem kind must be one of {PROBLEM_KINDS}, got {kind!r}")
        problem = super().__new__(cls, text)
        problem.kind = ProblemKind(kind)
        problem.value = value
        problem.where = where
        return problem


@dataclass(frozen=True)
class Die:
    """One die seen from above. `value` is None when its top face could not be read."""

    value: int | None
    x: float
    y: float
    size: float
    angle: float
    confidence: float

    def __post_init__(self) -> None:
        if self.value is not None and not 1 <= self.value <= 6:
            raise ValueError(f"a die shows 1 to 6 pips, got {self.value}")
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence must be within 0..1, got {self.confidence}")
        if self.size <= 0:
            raise ValueError(f"die size must be positive, got {self.size}")

    @property
    def outline(self) -> tuple[tuple[float, float], ...]:
        """Corners of the top face in image pixels, in drawing order."""
        half = self.size / 2.0
        cos_a = math.cos(math.radians(self.angle))
        sin_a = math.sin(math.radians(self.angle))
        return tuple(
            (self.x + dx * cos_a - dy * sin_a, self.y + dx * sin_a + dy * cos_a)
            for dx, dy in ((-half, -half), (half, -half), (half, half), (-half, half))
        )

    @property
    def box(self) -> tuple[tuple[float, float], tuple[float, float], float]:
        """The face as a rotated rectangle ((cx, cy), (w, h), angle), as cv2.minAreaRect gives it."""
        return ((self.x, self.y), (self.size, self.size), self.angle)


@dataclass(frozen=True)
class Reading:
    """All dice in one frame. Status "unsure" means: do not score this, ask for a re-roll or a fix."""

    dice: tuple[Die, ...]
    status: Status
    problems: tuple[Problem, ...] = ()

    def __post_init__(self) -> None:
        # Plain strings (a test's, a caller's own reason) are problems of kind "other".
        object.__setattr__(self, "problems", tuple(
            problem if isinstance(problem, Problem) else Problem(problem) for problem in self.problems))
        if self.status not in ("ok", "unsure"):
            raise ValueError(f"status must be 'ok' or 'unsure', got {self.status!r}")
        if self.status == "unsure" and not self.problems:
            raise ValueError("an unsure reading must say why")

    @property
    def values(self) -> list[int]:
        return sorted(d.value for d in self.dice if d.value is not None)

    def to_dict(self) -> dict:
        return {
            "status": self.status,
            "values": self.values,
            "dice": [
                {
                    "value": d.value,
                    "x": round(float(d.x), 1),
                    "y": round(float(d.y), 1),
                    "size": round(float(d.size), 1),
                    "confidence": round(float(d.confidence), 3),
                }
                for d in self.dice
            ],
            "problems": list(self.problems),
        }
