"""The table's one source of truth: the current game, the camera's status, and the state version.

Every change goes through one lock, is journaled before it is visible, bumps the version and is
published to the live streams. Writes name the version they were made against; a stale one is
refused, so two tablets tapping the same turn at once can never both record.
"""

from __future__ import annotations

import json
import logging
import threading
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from scorer import CATEGORIES, Game
from scorer.game import InvalidPlayersError, NoRollError
from scorer.rules import validate_die
from scorer.store import GameStore, StoreError, UnknownGameError, now_iso

from .events import Broadcaster

log = logging.getLogger(__name__)

# Versions are numbered from the program's start count, so a tablet holding a version from before a
# restart is refused rather than matched by chance against a new state.
VERSIONS_PER_BOOT = 1_000_000

CAMERA_STATUSES = ("live", "reading", "unsure", "offline", "off")


def problem_notes(problems: Sequence[Any]) -> list[dict[str, Any]]:
    """A reading's problems (vision.Problem) as notes for the page to word in the player's language:
    each kind once (where a die lies shows on the picture, not in words), with a doubtful die's value
    and, for a kind the page has no words for, the English text."""
    notes: list[dict[str, Any]] = []
    for problem in problems:
        note: dict[str, Any] = {"code": problem.kind}
        if problem.kind == "doubtful":
            note["value"] = problem.value
        elif problem.kind == "other":
            note["text"] = str(problem)
        if note not in notes:
            notes.append(note)
    return notes


class Advisor(Protocol):
    def advise(self, used: frozenset[str], dice: Sequence[int], roll_number: int) -> Any: ...

    def cost_of(self, used: frozenset[str], dice: Sequence[int], category: str) -> float: ...


class TableError(Exception):
    """A request the table refuses; `status` is the HTTP status, `code` the machine-readable reason."""

    status = 409
    code = "refused"

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class StaleVersionError(TableError):
    code = "stale_version"


class NoGameError(TableError):
    code = "no_game"


class UnknownGameIdError(TableError):
    status = 404
    code = "unknown_game"


class FinishedGameError(TableError):
    code = "game_over"


class TableService:
    def __init__(self, store: GameStore, *, camera_source: str = "off",
                 advisor: Advisor | None = None):
        self.store = store
        self._lock = threading.RLock()
        self._advisor = advisor
        self._version = store.next_boot() * VERSIONS_PER_BOOT
        # The version of the last change to the game itself. A write made against any version since
        # is still about the game the player saw: a camera status flicker in between does not
        # make it stale, a roll, record or undo does.
        self._game_version = self._version
        self._game_id: int | None = None
        self._game: Game | None = None
        # Per-die confidence of a camera roll, kept by the action count at which it was applied.
        self._confidence: tuple[int, list[float]] | None = None
        self._costs: dict[tuple, float | None] = {}
        self._advice_cache: tuple[tuple, dict[str, Any] | None] | None = None
        self._game_listeners: list[Callable[[bool], None]] = []
        self._camera: dict[str, Any] = {
            "status": "off" if camera_source == "off" else "offline",
            "source": camera_source,
            "message": None if camera_source == "off" else "opening the camera",
            "notes": [],
            "reading": None,
            "reading_counted": False,
            "updated": now_iso(),
        }
        current = store.current_game_id()
        if current is not None:
            try:
                self._game_id, self._game = current, store.load(current)
            except StoreError:
                # The table still starts, with no current game; the journal is left as it is so the
                # game can be looked into (and its earlier games stay listed).
                log.exception("game %s cannot be rebuilt from its journal; starting without it", current)
                self._game_id, self._game = None, None
        self._state_text = self._render()
        self.broadcaster = Broadcaster(self._version, self._state_text)

    # --- reading ---------------------------------------------------------------------------------

    @property
    def version(self) -> int:
        with self._lock:
            return self._version

    def state_json(self) -> str:
        """The current state as JSON text, rendered once per version."""
        with self._lock:
            return self._state_text

    def game_view(self, game_id: int) -> dict[str, Any]:
        with self._lock:
            if game_id == self._game_id and self._game is not None:
                return self._view(game_id, self._game)
        try:
            game = self.store.load(game_id)
        except UnknownGameError as error:
            raise UnknownGameIdError(str(error), "id") from None
        with self._lock:  # the advice and cost caches are shared with the live game
            return self._view(game_id, game, live=False)

    def past_games(self) -> list[dict[str, Any]]:
        return [summary.to_dict() for summary in self.store.list_games()]

    # --- writes from the tablets ----------------------------------------------------------------

    def new_game(self, version: object, players: object) -> None:
        with self._lock:
            self._check_version(version)
            try:
                _refuse_unprintable_names(players)
                game_id, game = self.store.start_game(players)
            except InvalidPlayersError as error:
                error.field = "players"  # type: ignore[attr-defined]
                raise
            self._game_id, self._game = game_id, game
            self._confidence = None
            self._changed()

    def resume(self, version: object, game_id: object) -> None:
        if isinstance(game_id, bool) or not isinstance(game_id, int):
            raise InvalidFieldError("game_id must be a whole number", "game_id")
        with self._lock:
            self._check_version(version)
            try:
                game = self.store.load(game_id)
            except UnknownGameError as error:
                raise UnknownGameIdError(str(error), "game_id") from None
            if game.is_over:
                raise FinishedGameError(f"game {game_id} is finished; start a new one", "game_id")
            self.store.set_current(game_id)
            self._game_id, self._game = game_id, game
            self._confidence = None
            self._changed()

    def roll(self, version: object, dice: object) -> None:
        self._act(version, {"type": "roll", "dice": dice, "source": "manual"}, "dice")

    def correct_die(self, version: object, die: object, value: object) -> None:
        with self._lock:
            self._check_version(version)
            game = self._current_game()
            if game.dice is None:
                raise NoRollError("there is no roll to correct yet")
            if isinstance(die, bool) or not isinstance(die, int) or not 0 <= die < len(game.dice):
                raise InvalidFieldError(
                    f"die must be a position from 0 to {len(game.dice) - 1}, got {die!r}", "die")
            try:
                face = validate_die(value)
            except ValueError as error:
                raise InvalidFieldError(str(error), "value") from None
            dice = list(game.dice)
            dice[die] = face
            self._act(version, {"type": "correct", "dice": dice}, "die")

    def correct(self, version: object, dice: object) -> None:
        self._act(version, {"type": "correct", "dice": dice}, "dice")

    def record(self, version: object, category: object) -> None:
        self._act(version, {"type": "record", "category": category}, "category")

    def undo(self, version: object) -> None:
        with self._lock:
            self._check_version(version)
            game = self._current_game()
            undone = game.undo()
            try:
                self.store.append_undo(self._game_id, game)  # type: ignore[arg-type]
            except BaseException:
                game.apply(undone)
                raise
            self._changed()

    # --- the table loop's side -------------------------------------------------------------------

    def camera_status(self, status: str, message: str | None = None, source: str | None = None) -> None:
        """The camera's condition changed (live, reading, offline...); `source` names the camera
        actually opened, when known. Its messages have no notes for the page to word: they are for
        whoever mends the camera. Same status and message: no-op."""
        if status not in CAMERA_STATUSES:
            raise ValueError(f"unknown camera status {status!r}")
        with self._lock:
            if self._camera["status"] == status and self._camera["message"] == message:
                return
            self._camera.update(status=status, message=message, notes=[], updated=now_iso())
            if source is not None:
                self._camera["source"] = source
            self._changed(game=False)

    def camera_moving(self) -> None:
        """Dice are moving again: an unsure reading no longer stands (it is still shown)."""
        with self._lock:
            if self._camera["status"] == "unsure":
                self._camera.update(status="live", message=None, notes=[], updated=now_iso())
                self._changed(game=False)

    def camera_read_failed(self, message: str) -> None:
        """Reading a settled throw failed: it is unsure, and the reading before it no longer stands
        (the page must not fill a roll from it nor show its picture)."""
        with self._lock:
            self._camera.update(status="unsure", message=message, notes=[{"code": "read_failed"}],
                                reading=None, reading_counted=False, updated=now_iso())
            self._changed(game=False)

    def camera_reading(self, reading: Any, repeated: bool = False) -> bool:
        """A settled throw has been read. Five dice read surely become the current player's next
        roll; returns whether it was counted. Anything else is shown and waits for a re-throw, and
        so is a `repeated` reading (the same dice in the same places as the last one)."""
        with self._lock:
            dice = sorted(reading.dice, key=lambda die: (die.x, die.y))
            counted = False
            if reading.status != "ok":
                status, message, notes = "unsure", "; ".join(reading.problems), problem_notes(reading.problems)
            elif len(dice) != 5 or any(die.value is None for die in dice):
                status = "unsure"
                message = f"{len(dice)} {'die' if len(dice) == 1 else 'dice'} seen; a roll has five"
                notes = [{"code": "dice_count", "count": len(dice)}]
            elif repeated:
                status, message = "live", "the same dice as before: throw again to roll"
                notes = [{"code": "same_throw"}]
            else:
                status = "live"
                counted, message, notes = self._camera_roll([die.value for die in dice],
                                                            [float(die.confidence) for die in dice])
            self._camera.update(status=status, message=message, notes=notes, reading=reading.to_dict(),
                                reading_counted=counted, updated=now_iso())
            self._changed(game=counted)
            return counted

    def _camera_roll(self, values: list[int], confidence: list[float]) -> tuple[bool, str | None, list[dict]]:
        """Whether five dice read surely became the current player's roll, and if not, why: in words
        and in notes."""
        game = self._game
        if game is None:
            return False, "start a game to count throws", [{"code": "no_game"}]
        if game.is_over:
            return False, "the game is over", [{"code": "game_over"}]
        if game.rolls_left == 0:
            return (False, f"{game.current_player_name} has thrown three times: choose a category",
                    [{"code": "rolls_used", "name": game.current_player_name}])
        game.apply({"type": "roll", "dice": values, "source": "camera"})
        try:
            self.store.append(self._game_id, game)  # type: ignore[arg-type]
        except BaseException:
            game.undo()
            raise
        self._confidence = (len(game.actions), confidence)
        return True, None, []

    # --- internals -------------------------------------------------------------------------------

    def _act(self, version: object, action: dict[str, Any], field: str) -> None:
        with self._lock:
            self._check_version(version)
            game = self._current_game()
            try:
                game.apply(action)
            except ValueError as error:
                error.field = field  # type: ignore[attr-defined]
                raise
            try:
                self.store.append(self._game_id, game)  # type: ignore[arg-type]
            except BaseException:
                game.undo()
                raise
            self._changed()

    def _check_version(self, version: object) -> None:
        if isinstance(version, bool) or not isinstance(version, int):
            raise InvalidFieldError("version must be the state version as a whole number", "version")
        if not self._game_version <= version <= self._version:
            raise StaleVersionError(
                f"the table has changed (version {self._version}, request made against {version}); "
                "reload the state and try again", "version")

    def _current_game(self) -> Game:
        if self._game is None:
            raise NoGameError("no game is being played; start one first")
        return self._game

    def _changed(self, game: bool = True) -> None:
        self._version += 1
        if game:
            self._game_version = self._version
        self._state_text = self._render()
        self.broadcaster.publish(self._version, self._state_text)
        if game:
            self._tell_game_listeners()

    @property
    def game_active(self) -> bool:
        """A game is under way (started and not over)."""
        with self._lock:
            return self._game is not None and not self._game.is_over

    def add_game_listener(self, listener: Callable[[bool], None]) -> None:
        """`listener(game_active)` now and after every change to the game (under the table's lock:
        keep it quick, like switching a light)."""
        with self._lock:
            self._game_listeners.append(listener)
            listener(self.game_active)

    def _tell_game_listeners(self) -> None:
        active = self.game_active
        for listener in self._game_listeners:
            try:
                listener(active)
            except Exception:
                log.exception("a game listener failed")

    def _render(self) -> str:
        game = None if self._game is None else self._view(self._game_id, self._game)  # type: ignore[arg-type]
        state = {"version": self._version, "categories": list(CATEGORIES), "game": game,
                 "camera": dict(self._camera)}
        return json.dumps(state, separators=(",", ":"), ensure_ascii=False)

    def _view(self, game_id: int, game: Game, live: bool = True) -> dict[str, Any]:
        view = game.view()
        del view["actions"]
        advisor = self._advisor
        source, confidence = None, None
        if game.dice is not None:
            source, confidence = self._dice_origin(game, live)
        view.update(
            id=game_id,
            dice_confidence=confidence,
            dice_source=source,
            can_undo=bool(game.actions),
            history=[self._history_entry(game, turn, advisor) for turn in game.history],
            advice=self._advice(game, advisor),
        )
        return view

    def _dice_origin(self, game: Game, live: bool) -> tuple[str, list[float] | None]:
        actions = game.actions
        last = actions[-1]
        if last["type"] == "correct":
            return "corrected", None
        source = last.get("source", "manual")
        confidence = None
        if (live and source == "camera" and self._confidence is not None
                and self._confidence[0] == len(actions)):
            confidence = self._confidence[1]
        return source, confidence

    def _history_entry(self, game: Game, turn: Any, advisor: Advisor | None) -> dict[str, Any]:
        entry = turn.to_dict()
        del entry["used_before"]
        entry["player_name"] = game.players[turn.player]
        entry["cost"] = None
        if advisor is not None:
            key = (turn.used_before, turn.dice, turn.category)
            if key not in self._costs:
                self._costs[key] = _guarded(lambda: float(advisor.cost_of(*key)))
            entry["cost"] = self._costs[key]
        return entry

    def _advice(self, game: Game, advisor: Advisor | None) -> dict[str, Any] | None:
        if advisor is None or game.dice is None or game.current_player is None:
            return None
        key = (game.used_categories(game.current_player), game.dice, game.roll_number)
        # Camera status changes re-render the state many times between two rolls; advise once.
        if self._advice_cache is None or self._advice_cache[0] != key:
            self._advice_cache = (key, _guarded(lambda: advisor.advise(*key).to_dict()))
        return self._advice_cache[1]


class InvalidFieldError(ValueError):
    """Malformed input (400) naming the JSON field at fault."""

    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field


def _refuse_unprintable_names(players: object) -> None:
    """Names come as a JSON list. Control characters and lone surrogates (valid in JSON text, not in UTF-8) cannot be shown
    on a score sheet or stored; refuse them before the game's own checks."""
    if not isinstance(players, list):  # the game takes any iterable; a JSON object is not meant
        raise InvalidPlayersError("players must be a list of names")
    for position, name in enumerate(players, start=1):
        if isinstance(name, str) and any(
                unicodedata.category(character) in ("Cc", "Cs") for character in name):
            raise InvalidPlayersError(f"player {position}'s name has a character that cannot be shown")


def _guarded(compute: Callable[[], Any]) -> Any:
    """Advice is a help, not the game: a failing advisor is logged and the state goes out without it."""
    try:
        return compute()
    except Exception:
        log.exception("the advisor failed; sending the state without its advice")
        return None
