"""One game of Yacht as a list of actions, and the state those actions lead to.

The action list is the whole truth: the state is derived from it, undo drops the last action, and
the JSON form is the players plus the actions. That is what lets the table journal every action and
rebuild a game after a power cut by replaying them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .actions import ROLL_SOURCES, Action, Correct, Hold, Record, Roll, Undo
from .holds import HoldError, check_held, compose_roll, validate_positions, validate_thrown
from .rules import CATEGORIES, DICE_PER_ROLL, ROLLS_PER_TURN, _score_valid, validate_category, validate_dice

MAX_PLAYERS = 8
MAX_NAME_LENGTH = 24
TURNS_PER_PLAYER = len(CATEGORIES)


class GameError(ValueError):
    """An action the rules refuse. The game is unchanged when one is raised. `code` names the
    reason for a program (the tablet words it in the player's language)."""

    code = "refused"


class InvalidInputError(GameError):
    """The action itself is malformed (a die of 7, an unknown category): it could never be played.
    `field` names the action's value at fault."""

    field: str | None = None


class StateConflictError(GameError):
    """A well-formed action that the game's state refuses now (a fourth roll, a category used)."""


class InvalidPlayersError(InvalidInputError):
    code = "invalid_players"
    field = "players"


class InvalidDiceError(InvalidInputError):
    code = "invalid_dice"
    field = "dice"


class UnknownCategoryError(InvalidInputError):
    code = "unknown_category"
    field = "category"


class InvalidActionError(InvalidInputError):
    code = "invalid_action"


class InvalidHoldError(InvalidInputError):
    code = "invalid_hold"
    field = "positions"


class FirstThrowError(StateConflictError):
    """Fewer than five dice thrown before the turn has a roll: there is nothing to hold yet."""

    code = "first_throw"
    field = "dice"


class ThrowMismatchError(StateConflictError):
    """Thrown dice that do not make a roll with the dice held now (three held, three thrown)."""

    code = "throw_mismatch"
    field = "dice"


class RollLimitError(StateConflictError):
    code = "roll_limit"


class NoRollError(StateConflictError):
    code = "no_roll"


class CategoryUsedError(StateConflictError):
    code = "category_used"


class GameOverError(StateConflictError):
    code = "game_over"


class NothingToUndoError(StateConflictError):
    code = "nothing_to_undo"


def validate_players(players: object) -> tuple[str, ...]:
    if isinstance(players, (str, bytes)) or not isinstance(players, Iterable):
        raise InvalidPlayersError("players must be a list of names")
    names = list(players)
    if not 1 <= len(names) <= MAX_PLAYERS:
        raise InvalidPlayersError(f"a game has 1 to {MAX_PLAYERS} players, got {len(names)}")
    cleaned: list[str] = []
    for position, name in enumerate(names, start=1):
        if not isinstance(name, str):
            raise InvalidPlayersError(f"player {position}'s name must be text, got {name!r}")
        name = " ".join(name.split())
        if not name:
            raise InvalidPlayersError(f"player {position}'s name is empty")
        if len(name) > MAX_NAME_LENGTH:
            raise InvalidPlayersError(
                f"player {position}'s name is longer than {MAX_NAME_LENGTH} characters"
            )
        if name.casefold() in (c.casefold() for c in cleaned):
            raise InvalidPlayersError(f"two players are called {name!r}; names must differ")
        cleaned.append(name)
    return tuple(cleaned)


def _dice(values: object) -> tuple[int, ...]:
    try:
        return validate_dice(values)
    except ValueError as error:
        raise InvalidDiceError(str(error)) from None


def _positions(positions: object) -> tuple[int, ...]:
    try:
        return validate_positions(positions)
    except HoldError as error:
        raise InvalidHoldError(str(error)) from None


def _category(category: object) -> str:
    try:
        return validate_category(category)
    except ValueError as error:
        raise UnknownCategoryError(str(error)) from None


@dataclass(frozen=True)
class Throw:
    """One roll of a turn as it stood when the turn ended: the five dice (as corrected) and the
    positions held from the roll before."""

    dice: tuple[int, ...]
    held: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"dice": list(self.dice), "held": list(self.held)}


@dataclass(frozen=True)
class RecordedTurn:
    """One row filled in: who, which turn, the dice and rolls used (each roll with the dice held),
    and what it scored."""

    player: int
    turn: int
    dice: tuple[int, ...]
    rolls: int
    category: str
    points: int
    used_before: frozenset[str]
    throws: tuple[Throw, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "turn": self.turn,
            "dice": list(self.dice),
            "rolls": self.rolls,
            "throws": [throw.to_dict() for throw in self.throws],
            "category": self.category,
            "points": self.points,
            "used_before": sorted(self.used_before, key=CATEGORIES.index),
        }


class Game:
    """A game of 1..8 players, 12 turns each, driven by roll, hold, correct, record and undo."""

    def __init__(self, players: Iterable[str]):
        self.players: tuple[str, ...] = validate_players(players)
        self._actions: list[Action] = []
        self._reset_derived()

    # --- actions ---------------------------------------------------------------------------

    def roll(self, dice: Sequence[int], source: str = "manual", held: Sequence[int] = ()) -> None:
        """The turn's next roll: five dice, those at positions `held` kept from the roll before."""
        self.apply(Roll(dice, source, held))

    def hold(self, positions: Sequence[int]) -> None:
        """Keep the dice at `positions` of the current roll for the next throw (the whole set)."""
        self.apply(Hold(positions))

    def roll_of_throw(self, thrown: object, source: str = "manual") -> Roll:
        """The roll a throw of `thrown` makes: all five dice, or 5-k dice held and these k thrown
        (placed where the thrown dice lay, in order). Refused when the count does not fit the holds."""
        try:
            values = validate_thrown(thrown)
        except HoldError as error:
            raise InvalidDiceError(str(error)) from None
        if len(values) == DICE_PER_ROLL:
            return Roll(values, source)
        if self._dice is None:
            raise FirstThrowError(f"a turn's first throw is all five dice; got {len(values)}")
        try:
            return Roll(compose_roll(self._dice, self._held, values), source, self._held)
        except HoldError as error:
            raise ThrowMismatchError(str(error)) from None

    def correct(self, dice: Sequence[int]) -> None:
        """Replace the current roll's values (a misread die) without counting a roll."""
        self.apply(Correct(dice))

    def record(self, category: str) -> int:
        """Enter the current dice in `category` for the current player; returns the points."""
        self.apply(Record(category))
        return self._history[-1].points

    def undo(self) -> Action:
        """Take back the last action and return it."""
        self.check(Undo())
        undone = self._actions[-1]
        self._apply_checked(Undo())
        return undone

    def apply(self, action: Action | Undo | Mapping[str, Any]) -> None:
        """Play one action (or its journal form). A refused action changes nothing."""
        self._apply_checked(self.check(action))

    def check(self, action: Action | Undo | Mapping[str, Any]) -> Action | Undo:
        """The action in its normalised form if the rules allow it now, else the GameError saying
        why. Changes nothing."""
        if isinstance(action, Mapping):
            action = action_from_dict(action)
        if isinstance(action, Undo):
            if not self._actions:
                raise NothingToUndoError("there is nothing to undo")
            return action
        return self._check(action)

    def followed_by(self, action: Action | Undo) -> Game:
        """A new game: this one after `action`, which `check` has passed. This game is unchanged."""
        after = copy.copy(self)
        after._actions = list(self._actions)
        after._sheets = [dict(sheet) for sheet in self._sheets]
        after._history = list(self._history)
        after._apply_checked(action)
        return after

    # --- what the game reports --------------------------------------------------------------

    @property
    def actions(self) -> tuple[Action, ...]:
        """The move stack: every action still standing, oldest first."""
        return tuple(self._actions)

    @property
    def records_made(self) -> int:
        return len(self._history)

    @property
    def is_over(self) -> bool:
        return self.records_made == TURNS_PER_PLAYER * len(self.players)

    @property
    def current_player(self) -> int | None:
        return None if self.is_over else self.records_made % len(self.players)

    @property
    def current_player_name(self) -> str | None:
        index = self.current_player
        return None if index is None else self.players[index]

    @property
    def turn(self) -> int | None:
        """The current player's turn number, 1..12."""
        return None if self.is_over else self.records_made // len(self.players) + 1

    @property
    def roll_number(self) -> int:
        """Rolls made in the current turn, 0..3."""
        return self._rolls

    @property
    def dice(self) -> tuple[int, ...] | None:
        return self._dice

    @property
    def held(self) -> tuple[int, ...]:
        """Positions of the current roll kept for the next throw."""
        return self._held

    @property
    def rolls_left(self) -> int:
        return 0 if self.is_over else ROLLS_PER_TURN - self._rolls

    @property
    def sheets(self) -> list[dict[str, int]]:
        """Each player's filled rows, category -> points."""
        return [dict(sheet) for sheet in self._sheets]

    @property
    def totals(self) -> list[int]:
        return [sum(sheet.values()) for sheet in self._sheets]

    @property
    def history(self) -> list[RecordedTurn]:
        return list(self._history)

    def used_categories(self, player: int) -> frozenset[str]:
        return frozenset(self._sheets[player])

    def open_categories(self, player: int) -> list[str]:
        return [c for c in CATEGORIES if c not in self._sheets[player]]

    def open_scores(self) -> dict[str, int]:
        """What each of the current player's open rows would score with the current dice."""
        if self._dice is None or self.current_player is None:
            return {}
        return {c: _score_valid(self._dice, c) for c in self.open_categories(self.current_player)}

    @property
    def winners(self) -> list[str]:
        """Names of the players with the highest total; empty until the game is over."""
        if not self.is_over:
            return []
        best = max(self.totals)
        return [name for name, total in zip(self.players, self.totals) if total == best]

    def view(self) -> dict[str, Any]:
        """Everything a scoreboard shows, as plain JSON-ready data."""
        return {
            "players": list(self.players),
            "current_player": self.current_player,
            "current_player_name": self.current_player_name,
            "turn": self.turn,
            "turns_per_player": TURNS_PER_PLAYER,
            "roll_number": self._rolls,
            "rolls_left": self.rolls_left,
            "dice": list(self._dice) if self._dice is not None else None,
            "held": list(self._held),
            "sheets": self.sheets,
            "totals": self.totals,
            "open_scores": self.open_scores(),
            "is_over": self.is_over,
            "winners": self.winners,
            "actions": len(self._actions),
            "history": [turn.to_dict() for turn in self._history],
        }

    # --- serialisation ---------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {"players": list(self.players), "actions": [action.to_dict() for action in self._actions]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Game:
        if not isinstance(data, Mapping) or "players" not in data:
            raise InvalidActionError("a saved game needs 'players' and 'actions'")
        game = cls(data["players"])
        actions = data.get("actions", [])
        if not isinstance(actions, list):
            raise InvalidActionError("'actions' must be a list")
        for action in actions:
            game.apply(action)
        return game

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Game:
        try:
            data = json.loads(text)
        except (TypeError, json.JSONDecodeError) as error:
            raise InvalidActionError(f"not a saved game: {error}") from None
        return cls.from_dict(data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"Game(players={list(self.players)!r}, actions={len(self._actions)})"

    # --- internals -------------------------------------------------------------------------

    def _reset_derived(self) -> None:
        self._sheets: list[dict[str, int]] = [{} for _ in self.players]
        self._history: list[RecordedTurn] = []
        self._rolls = 0
        self._dice: tuple[int, ...] | None = None
        self._held: tuple[int, ...] = ()
        self._throws: tuple[Throw, ...] = ()

    def _check(self, action: Action) -> Action:
        """Validate `action` against the current state; return its normalised form."""
        if not isinstance(action, (Roll, Hold, Correct, Record)):
            raise InvalidActionError(f"not an action: {action!r}")
        if self.is_over:
            raise GameOverError("the game is over")
        if isinstance(action, Roll):
            dice = _dice(action.dice)
            if action.source not in ROLL_SOURCES:
                raise InvalidActionError(f"roll source must be one of {', '.join(ROLL_SOURCES)}")
            if self._rolls >= ROLLS_PER_TURN:
                raise RollLimitError(
                    f"{self.current_player_name} has used all {ROLLS_PER_TURN} rolls; "
                    "choose a category"
                )
            held = _positions(action.held)
            if len(held) == DICE_PER_ROLL:
                raise InvalidHoldError("a throw is of at least one die; all five are held")
            if held and self._dice is None:
                raise FirstThrowError("a turn's first throw is all five dice: there is nothing held yet")
            try:
                check_held(self._dice, held, dice)
            except HoldError as error:
                raise ThrowMismatchError(str(error)) from None
            return Roll(dice, action.source, held)
        if isinstance(action, Hold):
            positions = _positions(action.positions)
            if self._dice is None:
                raise NoRollError("dice are held between throws: roll first")
            if self._rolls >= ROLLS_PER_TURN:
                raise RollLimitError(f"{self.current_player_name} has used all {ROLLS_PER_TURN} rolls; "
                                     "there is no throw left to hold dice for")
            return Hold(positions)
        if isinstance(action, Correct):
            dice = _dice(action.dice)
            if self._dice is None:
                raise NoRollError("there is no roll to correct yet")
            return Correct(dice)
        category = _category(action.category)
        if self._dice is None:
            raise NoRollError("roll the dice before choosing a category")
        player = self.current_player
        assert player is not None
        if category in self._sheets[player]:
            raise CategoryUsedError(f"{self.players[player]} has already used {category}")
        return Record(category)

    def _apply_checked(self, action: Action | Undo) -> None:
        if isinstance(action, Undo):
            # The state is derived from the actions: replaying all but the last is the undo.
            standing = self._actions[:-1]
            self._reset_derived()
            self._actions = []
            for earlier in standing:
                self._apply_checked(earlier)
            return
        if isinstance(action, Roll):
            self._rolls += 1
            self._dice = tuple(action.dice)
            # Holds are for one throw. Carried over, they would make the next throw of as many dice
            # silently keep the same ones, when the player may have swapped them (the seeds' Ana
            # keeps the 2s, then the 4s): the roll records them, and the next throw asks afresh.
            self._held = ()
            self._throws += (Throw(self._dice, tuple(action.held)),)
        elif isinstance(action, Hold):
            self._held = tuple(action.positions)
        elif isinstance(action, Correct):
            self._dice = tuple(action.dice)
            self._throws = (*self._throws[:-1], Throw(self._dice, self._throws[-1].held))
        else:
            player = self.current_player
            assert player is not None and self._dice is not None
            points = _score_valid(self._dice, action.category)
            self._history.append(
                RecordedTurn(
                    player=player,
                    turn=self.turn or 0,
                    dice=self._dice,
                    rolls=self._rolls,
                    category=action.category,
                    points=points,
                    used_before=frozenset(self._sheets[player]),
                    throws=self._throws,
                )
            )
            self._sheets[player][action.category] = points
            self._rolls = 0
            self._dice = None
            self._held = ()
            self._throws = ()
        self._actions.append(action)


def action_from_dict(data: object) -> Action:
    """An action from its journal form, or InvalidActionError naming what is wrong with its shape
    (its values are the game's to check)."""
    if not isinstance(data, Mapping):
        raise InvalidActionError(f"an action must be an object, got {data!r}")
    kind = data.get("type")
    if kind == "roll":
        return Roll(data.get("dice"), data.get("source", "manual"), data.get("held", ()))  # type: ignore[arg-type]
    if kind == "hold":
        return Hold(data.get("positions"))  # type: ignore[arg-type]
    if kind == "correct":
        return Correct(data.get("dice"))  # type: ignore[arg-type]
    if kind == "record":
        return Record(data.get("category"))  # type: ignore[arg-type]
    raise InvalidActionError(f"unknown action type {kind!r}; valid: roll, hold, correct, record")
