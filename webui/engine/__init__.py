"""The table without Flask: settings, camera supervision, settle and read, the journaled game
session, and the versioned state with its live events. `open_engine(settings)` builds one."""

from .actions import ChooseThrow, CorrectDie, GameAction, NewGame, Resume, TableAction, Throw
from .engine import Engine, open_engine
from .errors import (
    ConflictError,
    FinishedGameError,
    InvalidFieldError,
    InvalidRequestError,
    NoGameError,
    NotADemoError,
    NotFoundError,
    StaleVersionError,
    TableError,
    UnknownGameIdError,
)
from .settings import Settings, SettingsError, load_settings
from .table import CameraStatus, Table

__all__ = [
    "CameraStatus", "ChooseThrow", "ConflictError", "CorrectDie", "Engine", "FinishedGameError", "GameAction",
    "InvalidFieldError", "InvalidRequestError", "NewGame", "NoGameError", "NotADemoError", "NotFoundError",
    "Resume", "Settings", "SettingsError", "StaleVersionError", "Table", "TableAction", "TableError", "Throw",
    "UnknownGameIdError", "load_settings", "open_engine",
]
