"""What a tablet can ask of the table, as small values. The game's own actions (Roll, Hold, Correct,
Record, Undo) are scorer's; these add what concerns the table: which game is played, a correction
of one die by its position, a throw of only the dice not held, and the answer to the camera's
question of which dice were kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scorer.actions import Correct, Hold, Record, Roll, Undo


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


@dataclass(frozen=True)
class Throw:
    """The values of the dice thrown: all five, or as many as are not held (the held ones complete
    the roll)."""

    dice: Sequence[int]


@dataclass(frozen=True)
class ChooseThrow:
    """The roll the camera's last throw makes, picked from the choices it offered (which dice were
    kept, or whether a kept die that shows another face was bumped): their index."""

    choice: int


GameAction = NewGame | Resume | Roll | Throw | Hold | Correct | CorrectDie | Record | Undo
"""What the game session plays (the table answers its camera's questions itself)."""

TableAction = GameAction | ChooseThrow
