"""A game's actions as small values: a roll, dice held, a correction, a category recorded, an undo.

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
    """The turn's next roll: the five dice as they now show, and the positions of those held from
    the roll before (not thrown); the others were thrown. The record says both, so a game replays
    exactly."""

    dice: Sequence[int]
    source: str = "manual"
    held: Sequence[int] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"type": "roll", "dice": list(self.dice), "source": self.source, "held": list(self.held)}


@dataclass(frozen=True)
class Hold:
    """The dice at these positions of the current roll are kept for the next throw (the whole set:
    a position left out is no longer held). The roll that throw makes clears the holds."""

    positions: Sequence[int]

    def to_dict(self) -> dict[str, Any]:
        return {"type": "hold", "positions": list(self.positions)}


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


Action = Roll | Hold | Correct | Record
"""What stays on a game's move stack (an undo takes one off)."""
