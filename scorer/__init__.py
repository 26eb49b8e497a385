"""Yacht rules, game state, best-move advisor and game persistence: the pure middle of the table."""

from .actions import Action, Correct, Record, Roll, Undo
from .game import (
    CategoryUsedError,
    Game,
    GameError,
    GameOverError,
    InvalidActionError,
    InvalidDiceError,
    InvalidInputError,
    InvalidPlayersError,
    NoRollError,
    NothingToUndoError,
    RecordedTurn,
    RollLimitError,
    StateConflictError,
    UnknownCategoryError,
)
from .rules import CATEGORIES, ROW_MAXIMUM, score, score_all, validate_dice

__all__ = [
    "CATEGORIES",
    "ROW_MAXIMUM",
    "Action",
    "CategoryUsedError",
    "Correct",
    "Game",
    "GameError",
    "GameOverError",
    "InvalidActionError",
    "InvalidDiceError",
    "InvalidInputError",
    "InvalidPlayersError",
    "NoRollError",
    "NothingToUndoError",
    "Record",
    "RecordedTurn",
    "Roll",
    "RollLimitError",
    "StateConflictError",
    "Undo",
    "UnknownCategoryError",
    "score",
    "score_all",
    "validate_dice",
]
