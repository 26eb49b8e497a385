"""The game played at the table and the journal that keeps it.

`GameSession.apply` is the one way a game changes, whoever asks (a tablet's tap, a camera's throw):
the action is checked against the rules, journaled, and only then made the current state. A
journal write that fails leaves the game as it was, so what the tablets see is always on disk.
"""

from __future__ import annotations

import logging
import unicodedata

from scorer import Game
from scorer.actions import Action, Correct, Undo
from scorer.game import InvalidPlayersError, NoRollError
from scorer.rules import validate_die
from scorer.store import DamagedJournalError, GameStore, GameSummary, StoreError, UnknownGameError

from .actions import CorrectDie, GameAction, NewGame, Resume, Throw
from .errors import DamagedGameError, FinishedGameError, InvalidFieldError, NoGameError, UnknownGameIdError

log = logging.getLogger(__name__)


class GameSession:
    """The current game (if any) of one GameStore. Not thread-safe: the Table serialises calls."""

    def __init__(self, store: GameStore):
        self.store = store
        self.game_id: int | None = None
        self.game: Game | None = None
        current = store.current_game_id()
        if current is not None:
            try:
                self.game_id, self.game = current, store.load(current)
            except StoreError:
                # The table still starts, with no current game; the journal is left as it is so the
                # game can be looked into (and its earlier games stay listed).
                log.exception("game %s cannot be rebuilt from its journal; starting without it", current)

    def apply(self, action: GameAction) -> None:
        """Check `action`, journal it, then make it the current state; a refusal changes nothing."""
        if isinstance(action, NewGame):
            _refuse_unprintable_names(action.players)
            self.game_id, self.game = self.store.start_game(action.players)
            return
        if isinstance(action, Resume):
            game = self.load(action.game_id, field="game_id")
            if game.is_over:
                raise FinishedGameError(f"game {action.game_id} is finished; start a new one", "game_id")
            self.store.set_current(action.game_id)
            self.game_id, self.game = action.game_id, game
            return
        game_id, game = self._current()
        played: Action | Undo
        if isinstance(action, CorrectDie):
            played = _correction(game, action)
        elif isinstance(action, Throw):
            played = game.roll_of_throw(action.dice)
        else:
            played = action
        checked = game.check(played)
        after = game.followed_by(checked)
        self.store.append(game_id, checked, after)
        self.game = after

    def load(self, game_id: object, field: str = "id") -> Game:
        """A game of this table's journal (current or past), rebuilt."""
        if isinstance(game_id, bool) or not isinstance(game_id, int):
            raise InvalidFieldError(f"{field} must be a whole number", field)
        try:
            return self.store.load(game_id)
        except UnknownGameError as error:
            raise UnknownGameIdError(str(error), field) from None
        except DamagedJournalError as error:
            raise DamagedGameError(f"{error}; it cannot be resumed, only looked at", field, error.valid) from None

    def past_games(self) -> list[GameSummary]:
        return self.store.list_games()

    def close(self) -> None:
        self.store.close()

    def _current(self) -> tuple[int, Game]:
        if self.game is None or self.game_id is None:
            raise NoGameError("no game is being played; start one first")
        return self.game_id, self.game


def _correction(game: Game, action: CorrectDie) -> Correct:
    """The whole roll with one die's value replaced."""
    if game.dice is None:
        raise NoRollError("there is no roll to correct yet")
    die = action.die
    if isinstance(die, bool) or not isinstance(die, int) or not 0 <= die < len(game.dice):
        raise InvalidFieldError(f"die must be a position from 0 to {len(game.dice) - 1}, got {die!r}", "die")
    try:
        face = validate_die(action.value)
    except ValueError as error:
        raise InvalidFieldError(str(error), "value") from None
    dice = list(game.dice)
    dice[die] = face
    return Correct(dice)


def _refuse_unprintable_names(players: object) -> None:
    """Names come as a JSON list. Control characters and lone surrogates (valid in JSON text, not in
    UTF-8) cannot be shown on a score sheet or stored; refuse them before the game's own checks."""
    if not isinstance(players, list):  # the game takes any iterable; a JSON object is not meant
        raise InvalidPlayersError("players must be a list of names")
    for position, name in enumerate(players, start=1):
        if isinstance(name, str) and any(
                unicodedata.category(character) in ("Cc", "Cs") for character in name):
            raise InvalidPlayersError(f"player {position}'s name has a character that cannot be shown")
