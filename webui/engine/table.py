"""One table's source of truth: its game session, its camera's status, and the state version.

Every change goes through one lock, is journaled before it is visible, bumps the version and is
published to the live streams. Writes name the version they were made against; a stale one is
refused, so two tablets tapping the same turn at once can never both record.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hardware.supervisor import CameraState
from scorer import CATEGORIES, Game
from scorer.actions import Hold, Roll
from scorer.holds import HoldError, KeptChoice, throw_choices
from scorer.rules import DICE_PER_ROLL
from scorer.stats import player_stats
from scorer.store import StoreError, now_iso

from .actions import ChooseThrow, TableAction, Throw
from .errors import ConflictError, DamagedGameError, InvalidFieldError, StaleVersionError
from .events import Broadcaster
from .export import game_record
from .session import GameSession
from .views import Advisor, GameViews

log = logging.getLogger(__name__)

# Versions are set aside on disk this many at a time (GameStore.reserve_versions): a version is never
# issued twice, across restarts too, so a tablet holding one from before a restart is refused rather
# than matched by chance against a new state; and the disk is written once per this many changes.
VERSION_BLOCK = 10_000


class NoQuestionError(ConflictError):
    code = "no_question"
    field = "choice"


@dataclass(frozen=True)
class ThrowQuestion:
    """A throw the camera read but cannot make into a roll alone: which dice were kept aside
    ("which_kept"), or whether a kept die that shows another face was bumped ("bumped"). The dice
    seen, left to right, and the rolls it may make, most likely first, for a player to pick."""

    reason: str
    seen: tuple[Any, ...]
    choices: tuple[KeptChoice, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "seen": [die.value for die in self.seen],
                "choices": [choice.to_dict() for choice in self.choices]}


@dataclass(frozen=True)
class CameraStatus:
    """The camera as the tablets see it: its state, the source, a message for whoever mends it, notes
    for the page to word in the player's language, the last reading (with whether it counted) and,
    when the table cannot tell which roll that throw makes, the question for the players."""

    state: CameraState
    source: str
    message: str | None = None
    notes: tuple[dict[str, Any], ...] = ()
    reading: dict[str, Any] | None = None
    reading_counted: bool = False
    question: ThrowQuestion | None = None
    demo: bool = False  # the demo camera: sample pictures, one thrown each time a player asks
    # A roll was typed on a tablet since this reading: the reading is not of the dice shown, and
    # what it said is answered.
    typed_after_reading: bool = False
    updated: str = field(default_factory=now_iso)

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.state.value, "source": self.source, "demo": self.demo, "message": self.message,
                "typed_after_reading": self.typed_after_reading,
                "notes": list(self.notes), "reading": self.reading,
                "reading_counted": self.reading_counted,
                "question": None if self.question is None else self.question.to_dict(),
                "updated": self.updated}


def problem_notes(problems: Sequence[Any]) -> tuple[dict[str, Any], ...]:
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
    return tuple(notes)


SEEN_FIELDS = ("game", "turn", "player", "roll", "dice")
"""What a write may say its player saw (game id, turn, current player, roll number, dice). Camera
status is not among them: it changing under a finger does not change what the tap means."""


def what_changed(seen: object, now: dict[str, Any]) -> list[dict[str, Any]]:
    """How the game `now` differs from what a player `seen`, in SEEN_FIELDS order; fields `seen`
    leaves out are not compared."""
    if not isinstance(seen, dict) or not set(seen) <= set(SEEN_FIELDS):
        raise InvalidFieldError(f"seen must be an object with some of {', '.join(SEEN_FIELDS)}", "seen")
    return [{"what": name, "seen": seen[name], "now": now[name]}
            for name in SEEN_FIELDS if name in seen and seen[name] != now[name]]


class Table:
    """The state every tablet sees, and the only way to change it: `apply(version, action)` from
    the tablets, the camera_* methods from the table loop."""

    def __init__(self, session: GameSession, *, camera_source: str = "off", advisor: Advisor | None = None,
                 demo: bool = False):
        self.session = session
        self._lock = threading.RLock()
        self._views = GameViews(advisor)
        self._version = session.store.reserve_versions(VERSION_BLOCK)
        self._reserved_until = self._version + VERSION_BLOCK
        # The version of the last change to the game itself. A write made against any version since
        # is still about the game the player saw: a camera status flicker in between does not
        # make it stale, a roll, record or undo does.
        self._game_version = self._version
        # The current roll as the camera read it, kept with the game, turn and roll it is of: where
        # each die lies (by position; the next throw of five is told apart by them) and how sure
        # its reading was (None for a die held out of view).
        self._camera_roll: tuple[tuple[int | None, int, int], dict[int, Any], list[float | None]] | None = None
        self._game_listeners: list[Callable[[bool], None]] = []
        # Players' statistics, kept with the finished games they were counted over.
        self._stats: tuple[tuple[int, ...], list[dict[str, Any]]] | None = None
        off = camera_source == "off"
        # The first words every tablet sees: coded, so that each page says them in its language.
        self._camera = CameraStatus(CameraState.OFF if off else CameraState.OFFLINE, camera_source,
                                    None if off else "opening the camera",
                                    notes=() if off else ({"code": "opening"},), demo=demo)
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

    def game_view(self, game_id: object) -> dict[str, Any]:
        with self._lock:
            if game_id == self.session.game_id and self.session.game is not None:
                return self._live_view()
        try:
            game = self.session.load(game_id)
        except DamagedGameError as damaged:
            if isinstance(damaged.valid, Game):  # the part that replays, shown with the refusal
                with self._lock:
                    damaged.details = {"game": self._views.view(game_id, damaged.valid)}  # type: ignore[arg-type]
            raise
        with self._lock:  # the advice and cost caches are shared with the live game
            return self._views.view(game_id, game)  # type: ignore[arg-type]  # load checked it

    def past_games(self) -> list[dict[str, Any]]:
        return [summary.to_dict() for summary in self.session.past_games()]

    def game_record(self, game_id: object) -> dict[str, Any]:
        """A game to keep as a file (webui.engine.export): every turn, its dates and its journal."""
        view = self.game_view(game_id)
        summary = next((past for past in self.past_games() if past["id"] == game_id), None)
        actions = [action.to_dict() for action in self.session.load(game_id).actions]
        return game_record(view, summary, actions)

    def player_stats(self) -> list[dict[str, Any]]:
        """Each player's games, average, best, Yachts and wins over the finished games."""
        finished = tuple(past.id for past in self.session.past_games() if past.is_over)
        with self._lock:
            if self._stats is None or self._stats[0] != finished:
                stats = player_stats(self.session.load(game_id) for game_id in finished)
                self._stats = (finished, [player.to_dict() for player in stats])
            return self._stats[1]

    def dice_to_throw(self) -> int:
        """How many dice the current player's next throw is of: five, or those not held."""
        with self._lock:
            game = self.session.game
            if game is None or game.is_over or game.roll_number == 0:
                return DICE_PER_ROLL
            return DICE_PER_ROLL - len(game.held)

    @property
    def game_active(self) -> bool:
        """A game is under way (started and not over)."""
        with self._lock:
            game = self.session.game
            return game is not None and not game.is_over

    def add_game_listener(self, listener: Callable[[bool], None]) -> None:
        """`listener(game_active)` now and after every change to the game (under the table's lock:
        keep it quick, like switching a light)."""
        with self._lock:
            self._game_listeners.append(listener)
            listener(self.game_active)

    # --- writes from the tablets ----------------------------------------------------------------

    def apply(self, version: object, action: TableAction, seen: object = None) -> None:
        """Play `action`, made by someone who saw the state at `version` and, as a tablet says it,
        `seen`: the game, turn, player, roll and dice on their screen (see SEEN_FIELDS). The
        camera's question, if any, is answered by a ChooseThrow, or by holds that say which dice
        were kept; any other change to the game leaves it unanswered, and it goes."""
        with self._lock:
            self._check_version(version, seen)
            question = self._camera.question
            if isinstance(action, ChooseThrow):
                self._choose_throw(action.choice)
                return
            self.session.apply(action)
            typed = isinstance(action, Throw)
            if question is not None and isinstance(action, Hold) and question.reason == "which_kept":
                self._camera_throw_answered(list(question.seen))
            elif question is not None:
                self._set_camera(question=None, notes=(), message=None, changed_game=True,
                                 typed_after_reading=typed or self._camera.typed_after_reading)
            elif typed:
                self._set_camera(typed_after_reading=True, changed_game=True)
            else:
                self._changed()

    # --- the table loop's side -------------------------------------------------------------------

    def camera_changed(self, state: CameraState, message: str | None = None, source: str | None = None) -> None:
        """The camera's condition changed (live, reading, offline...); `source` names the camera
        actually opened, when known. Its messages have no notes for the page to word: they are for
        whoever mends the camera. Same state and message: no-op."""
        with self._lock:
            if (self._camera.state, self._camera.message) == (state, message):
                return
            self._set_camera(state=state, message=message, notes=(),
                             source=self._camera.source if source is None else source)

    def camera_moving(self) -> None:
        """Dice are moving again: an unsure reading no longer stands (it is still shown)."""
        with self._lock:
            if self._camera.state is CameraState.UNSURE:
                self._set_camera(state=CameraState.LIVE, message=None, notes=())

    def camera_read_failed(self, message: str) -> None:
        """Reading a settled throw failed: it is unsure, and the reading before it no longer stands
        (the page must not fill a roll from it nor show its picture)."""
        with self._lock:
            self._set_camera(state=CameraState.UNSURE, message=message, notes=({"code": "read_failed"},),
                             reading=None, reading_counted=False)

    def camera_reading(self, reading: Any, repeated: bool = False) -> bool:
        """A settled throw has been read. One to five dice read surely become the current player's
        next roll, the dice not seen being those held (kept aside), and of five those lying where
        they lay being the kept ones; returns whether it was counted. When the table cannot tell
        which roll a throw makes it asks (a ThrowQuestion); anything else is shown and waits for a
        re-throw, and so is a `repeated` reading (the same dice in the same places as the last one)."""
        with self._lock:
            dice = sorted(reading.dice, key=lambda die: (die.x, die.y))
            if reading.status != "ok":
                self._set_camera(state=CameraState.UNSURE, message="; ".join(map(str, reading.problems)),
                                 notes=problem_notes(reading.problems), reading=reading.to_dict(),
                                 reading_counted=False, question=None)
            elif not dice:  # an empty tray (the dice taken up to throw, a demo's start) is no throw
                self._set_camera(state=CameraState.LIVE, message=None, notes=(), reading=reading.to_dict(),
                                 reading_counted=False, question=None)
            elif len(dice) > 5 or any(die.value is None for die in dice):
                self._set_camera(state=CameraState.UNSURE, reading=reading.to_dict(), reading_counted=False,
                                 message=f"{len(dice)} {'die' if len(dice) == 1 else 'dice'} seen; "
                                         "a throw is of one to five dice",
                                 notes=({"code": "dice_count", "count": len(dice)},), question=None)
            elif repeated:
                self._set_camera(state=CameraState.LIVE, message="the same dice as before: throw again to roll",
                                 notes=({"code": "same_throw"},), reading=reading.to_dict(),
                                 reading_counted=False, question=None)
            else:
                self._camera = dataclasses.replace(self._camera, reading=reading.to_dict(),
                                                   typed_after_reading=False)
                self._camera_throw_answered(dice)
            return self._camera.reading_counted

    def _camera_throw_answered(self, dice: list[Any]) -> None:
        """Make the throw of `dice` (read surely, left to right) the current player's next roll, ask
        which roll it makes, or say why it cannot count; then publish the change."""
        game = self.session.game
        notes: tuple[dict[str, Any], ...] = ()
        message: str | None = None
        question = None
        state = CameraState.LIVE
        choices: tuple[KeptChoice, ...] = ()
        if game is None:
            message, notes = "start a game to count throws", ({"code": "no_game"},)
        elif game.is_over:
            message, notes = "the game is over", ({"code": "game_over"},)
        elif game.rolls_left == 0:
            message = f"{game.current_player_name} has thrown three times: choose a category"
            notes = ({"code": "rolls_used", "name": game.current_player_name},)
        else:
            previous = game.dice if game.roll_number > 0 else None
            try:
                choices = throw_choices(previous, game.held, self._read_roll(game)[0], dice,
                                        self._views.ranked_keeps(game))
            except HoldError as error:
                state, message = CameraState.UNSURE, str(error)
                notes = ({"code": "first_throw_five", "count": len(dice)},)
        if len(choices) > 1:
            if len(dice) == 5:
                question = ThrowQuestion("bumped", tuple(dice), choices)
                message, notes = "a kept die shows another face: was it bumped?", ({"code": "bumped"},)
            else:
                question = ThrowQuestion("which_kept", tuple(dice), choices)
                message = f"{len(dice)} thrown: which dice were kept? (choose on a tablet)"
                notes = ({"code": "which_kept", "count": len(dice)},)
        elif choices and choices[0].nothing_thrown:
            message, notes = "the same dice as before: throw again to roll", ({"code": "same_throw"},)
        elif choices:
            self._play_camera_roll(choices[0], dice)
        counted = bool(choices) and question is None and not choices[0].nothing_thrown
        # A throw that made no roll and asks nothing (no game yet, no throw left, the same dice) left
        # the game as it was: a tap made meanwhile still acts on what its player saw.
        asked = question is not None or self._camera.question is not None
        self._set_camera(state=state, message=message, notes=notes, question=question,
                         reading_counted=counted, changed_game=counted or asked)

    def _play_camera_roll(self, choice: KeptChoice, seen: Sequence[Any]) -> None:
        self.session.apply(Roll(choice.dice, "camera", choice.held))
        game = self.session.game
        assert game is not None
        self._camera_roll = (self._roll_key(game), {p: seen[j] for p, j in enumerate(choice.lying) if j is not None},
                             [None if j is None else float(seen[j].confidence) for j in choice.lying])

    def _choose_throw(self, index: object) -> None:
        question = self._camera.question
        if question is None:
            raise NoQuestionError("the camera has no throw waiting for an answer (another tablet may "
                                  "have answered, or the game moved on)")
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(question.choices):
            raise InvalidFieldError(f"choice must be a whole number from 0 to {len(question.choices) - 1}, "
                                    f"got {index!r}", "choice")
        choice = question.choices[index]
        if not choice.nothing_thrown:
            self._play_camera_roll(choice, question.seen)
        self._set_camera(state=CameraState.LIVE, message=None, notes=(), question=None,
                         reading_counted=not choice.nothing_thrown, changed_game=True)

    def _roll_key(self, game: Game) -> tuple[int | None, int, int]:
        return (self.session.game_id, game.records_made, game.roll_number)

    def _read_roll(self, game: Game) -> tuple[dict[int, Any], list[float | None] | None]:
        """Where the current roll's dice lie and how surely each was read, when the camera read it
        (a roll typed in, or undone to, has no places: its next throw of five counts every die as
        thrown)."""
        if self._camera_roll is None or self._camera_roll[0] != self._roll_key(game):
            return {}, None
        return self._camera_roll[1], self._camera_roll[2]

    # --- internals -------------------------------------------------------------------------------

    def _set_camera(self, *, changed_game: bool = False, **changes: Any) -> None:
        if "reading" in changes:  # a new reading (or none): no roll has been typed since it
            changes.setdefault("typed_after_reading", False)
        self._camera = dataclasses.replace(self._camera, updated=now_iso(), **changes)
        self._changed(game=changed_game)

    def _check_version(self, version: object, seen: object) -> None:
        if isinstance(version, bool) or not isinstance(version, int):
            raise InvalidFieldError("version must be the state version as a whole number", "version")
        changed = [] if seen is None else what_changed(seen, self._seen_now())
        if not self._game_version <= version <= self._version or changed:
            raise StaleVersionError(
                f"the table has changed (version {self._version}, request made against {version}); "
                "reload the state and try again", changed)

    def _seen_now(self) -> dict[str, Any]:
        game = self.session.game
        if game is None:
            return dict.fromkeys(SEEN_FIELDS)
        return {"game": self.session.game_id, "turn": game.turn, "player": game.current_player,
                "roll": game.roll_number, "dice": None if game.dice is None else list(game.dice)}

    def _changed(self, game: bool = True) -> None:
        if self._version + 1 >= self._reserved_until:
            self._reserve_versions()
        self._version += 1
        if game:
            self._game_version = self._version
        self._state_text = self._render()
        self.broadcaster.publish(self._version, self._state_text)
        if game:
            self._tell_game_listeners()

    def _reserve_versions(self) -> None:
        try:
            start = self.session.store.reserve_versions(VERSION_BLOCK, after=self._version)
        except (StoreError, sqlite3.Error) as error:
            # The change itself is already made (a game change was journaled first); the versions go on
            # past the reservation, and the next block is asked for at the next change.
            log.warning("could not set aside state versions on disk: %s", error)
            return
        self._version = start - 1
        self._reserved_until = start + VERSION_BLOCK

    def _tell_game_listeners(self) -> None:
        active = self.game_active
        for listener in self._game_listeners:
            try:
                listener(active)
            except Exception:
                log.exception("a game listener failed")

    def _live_view(self) -> dict[str, Any]:
        session = self.session
        assert session.game_id is not None and session.game is not None
        return self._views.view(session.game_id, session.game, self._read_roll(session.game)[1])

    def _render(self) -> str:
        game = None if self.session.game is None else self._live_view()
        state = {"version": self._version, "categories": list(CATEGORIES), "game": game,
                 "camera": self._camera.to_dict()}
        return json.dumps(state, separators=(",", ":"), ensure_ascii=False)
