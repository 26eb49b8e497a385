"""Yacht rules, game state, best-move advisor and game persistence: the pure middle of the table."""

from .game import (
    CategoryUsedError,
    Game,
    GameError,
    GameOverError,
    InvalidActionError,
    InvalidDiceError,
    InvalidPlayersError,
    NoRollError,
    NothingToUndoError,
    RecordedTurn,
    RollLimitError,
    UnknownCategoryError,
)
from .rules import CATEGORIES, ROW_MAXIMUM, score, score_all, validate_dice

__all__ = [
    "CATEGORIES",
    "ROW_MAXIMUM",
    "CategoryUsedError",
    "Game",
    "GameError",
    "GameOverError",
    "InvalidActionError",
    "InvalidDiceError",
    "InvalidPlayersError",
    "NoRollError",
    "NothingToUndoError",
    "RecordedTurn",
    "RollLimitError",
    "UnknownCategoryError",
    "score",
    "score_all",
    "validate_dice",
]
