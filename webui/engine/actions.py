"""What a tablet can ask of the table, as small values. The game's own actions (Roll, Correct,
Record, Undo) are scorer's; these add what concerns the table: which game is played, and a
correction of one die by its position."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scorer.actions import Correct, Record, Roll, Undo


@dataclass(frozen=True)
class NewGame:
    """A new game for these players, made the current one."""

    players: Sequence[str]


@dataclass(frozen=True)
class Resume:
    """An unfinished earlier game made the current one again."""

    game_id: int


@dataclass(frozen=True)
class CorrectDie:
    """One die of the current roll, by its position, read wrongly: it shows `value`."""

    die: int
    value: int


TableAction = NewGame | Resume | Roll | Correct | CorrectDie | Record | Undo
