"""A game's actions as small values: a roll, a correction, a category recorded, an undo.

A game is its players plus the list of these (its move stack); the journal keeps each in its dict
form. An action says what a player did, not whether the rules allow it: `Game.check` decides that.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

ROLL_SOURCES = ("manual", "camera")


@dataclass(frozen=True)
class Roll:
    """A throw of all five dice (kept dice included), counted as the turn's next roll."""

    dice: Sequence[int]
    source: str = "manual"

    def to_dict(self) -> dict[str, Any]:
        return {"type": "roll", "dice": list(self.dice), "source": self.source}


@dataclass(frozen=True)
class Correct:
    """The current roll's values replaced (a misread die); no roll is counted."""

    dice: Sequence[int]

    def to_dict(self) -> dict[str, Any]:
        return {"type": "correct", "dice": list(self.dice)}


@dataclass(frozen=True)
class Record:
    """The current dice entered in `category` for the current player; the turn passes."""

    category: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": "record", "category": self.category}


@dataclass(frozen=True)
class Undo:
    """The last action taken back."""

    def to_dict(self) -> dict[str, Any]:
        return {"type": "undo"}


Action = Roll | Correct | Record
"""What stays on a game's move stack (an undo takes one off)."""
