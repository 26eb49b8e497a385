"""The table's refusals. Each kind is a class (the HTTP adapter maps kinds to statuses); `code`
names the reason for the page to word, `field` the request's value at fault.

Refusals of the rules themselves are scorer's: scorer.InvalidInputError (the action can never be
played) and scorer.StateConflictError (not now)."""

from __future__ import annotations


class TableError(Exception):
    code = "refused"
    field: str | None = None

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


class NotFoundError(TableError):
    """The request names something the table does not have."""


class StaleVersionError(ConflictError):
    code = "stale_version"
    field = "version"


class NoGameError(ConflictError):
    code = "no_game"


class FinishedGameError(ConflictError):
    code = "game_over"


class UnknownGameIdError(NotFoundError):
    code = "unknown_game"
