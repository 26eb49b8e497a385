"""The table's refusals. Each kind is a class (the HTTP adapter maps kinds to statuses); `code`
names the reason for the page to word, `field` the request's value at fault.

Refusals of the rules themselves are scorer's: scorer.InvalidInputError (the action can never be
played) and scorer.StateConflictError (not now)."""

from __future__ import annotations

from typing import Any


class TableError(Exception):
    code = "refused"
    field: str | None = None
    details: dict[str, Any] | None = None  # more for the page than words: sent beside the code

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        if field is not None:
            self.field = field


class InvalidRequestError(TableError):
    """The request is malformed: a value of the wrong kind, a field missing."""

    code = "invalid_input"


class InvalidFieldError(InvalidRequestError):
    """One named value of the request is unusable."""

    def __init__(self, message: str, field: str):
        super().__init__(message, field)


class ConflictError(TableError):
    """A well-formed request that the table's state refuses now."""


class DamagedGameError(ConflictError):
    """A game whose journal has a row that does not replay: it cannot be resumed. `valid` is the
    game the rows before that one make; its view goes in the details as "game", for the page to
    show with the refusal."""

    code = "game_damaged"

    def __init__(self, message: str, field: str | None = None, valid: object = None):
        super().__init__(message, field)
        self.valid = valid


class NotFoundError(TableError):
    """The request names something the table does not have."""


class StaleVersionError(ConflictError):
    """The game changed after the player looked: `changed` lists how, each as {what, seen, now}
    (what: game, turn, player, roll or dice), when the request said what it was made against."""

    code = "stale_version"
    field = "version"

    def __init__(self, message: str, changed: list[dict[str, Any]] | None = None):
        super().__init__(message)
        self.details = {"changed": changed or []}


class NotADemoError(ConflictError):
    """A throw asked of a table whose camera is not the demo: real dice are thrown by hand."""

    code = "not_a_demo"


class AllHeldError(ConflictError):
    """A demo throw asked while every die is held: there is nothing to throw."""

    code = "all_held"


class NoGameError(ConflictError):
    code = "no_game"


class FinishedGameError(ConflictError):
    code = "game_over"


class UnknownGameIdError(NotFoundError):
    code = "unknown_game"
