"""One game of Yacht as a list of actions, and the state those actions lead to.

The action list is the whole truth: the state is derived from it, undo drops the last action, and
the JSON form is the players plus the actions. That is what lets the table journal every action and
rebuild a game after a power cut by replaying them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .rules import CATEGORIES, _score_valid, validate_category, validate_dice

MAX_PLAYERS = 8
MAX_NAME_LENGTH = 24
MAX_ROLLS_PER_TURN = 3
TURNS_PER_PLAYER = len(CATEGORIES)
ROLL_SOURCES = ("manual", "camera")


class GameError(ValueError):
    """An action the rules refuse. The game is unchanged when one is raised."""

    code = "refused"


class InvalidPlayersError(GameError):
    code = "invalid_players"


class InvalidDiceError(GameError):
    code = "invalid_dice"


class UnknownCategoryError(GameError):
    code = "unknown_category"


class RollLimitError(GameError):
    code = "roll_limit"


class NoRollError(GameError):
    code = "no_roll"


class CategoryUsedError(GameError):
    code = "category_used"


class GameOverError(GameError):
    code = "game_over"


class NothingToUndoError(GameError):
    code = "nothing_to_undo"


class InvalidActionError(GameError):
    code = "invalid_action"


def validate_players(players: object) -> tuple[str, ...]:
    if isinstance(players, (str, bytes)) or not isinstance(players, Iterable):
        raise InvalidPlayersError("players must be a list of names")
    names = list(players)
    if not 1 <= len(names) <= MAX_PLAYERS:
        raise InvalidPlayersError(f"a game has 1 to {MAX_PLAYERS} players, got {len(names)}")
    cleaned = []
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


def _category(category: object) -> str:
    try:
        return validate_category(category)
    except ValueError as error:
        raise UnknownCategoryError(str(error)) from None


@dataclass(frozen=True)
class RecordedTurn:
    """One row filled in: who, which turn, the dice and rolls used, and what it scored."""

    player: int
    turn: int
    dice: tuple[int, ...]
    rolls: int
    category: str
    points: int
    used_before: frozenset[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "turn": self.turn,
            "dice": list(self.dice),
            "rolls": self.rolls,
            "category": self.category,
            "points": self.points,
            "used_before": sorted(self.used_before, key=CATEGORIES.index),
        }


class Game:
    """A game of 1..8 players, 12 turns each, driven by roll, correct, record and undo."""

    def __init__(self, players: Iterable[str]):
        self.players: tuple[str, ...] = validate_players(players)
        self._actions: list[dict[str, Any]] = []
        self._reset_derived()

    # --- actions -------------------------------------------------------------------------

    def roll(self, dice: Sequence[int], source: str = "manual") -> None:
        """A throw of all five dice (kept dice included), counted as the turn's next roll."""
        self.apply({"type": "roll", "dice": dice, "source": source})

    def correct(self, dice: Sequence[int]) -> None:
        """Replace the current roll's values (a misread die) without counting a roll."""
        self.apply({"type": "correct", "dice": dice})

    def record(self, category: str) -> int:
        """Enter the current dice in `category` for the current player; returns the points."""
        self.apply({"type": "record", "category": category})
        return self._history[-1].points

    def undo(self) -> dict[str, Any]:
        """Take back the last action and return it."""
        if not self._actions:
            raise NothingToUndoError("there is nothing to undo")
        undone = self._actions[-1]
        self._replay(self._actions[:-1])
        return dict(undone)

    def apply(self, action: Mapping[str, Any]) -> None:
        """Apply one action given as a dict (the journal's form). Refused actions change nothing."""
        normalised = self._check(action)
        self._apply_checked(normalised)
        self._actions.append(normalised)

    # --- what the game reports --------------------------------------------------------------

    @property
    def actions(self) -> list[dict[str, Any]]:
        return [dict(a, dice=list(a["dice"])) if "dice" in a else dict(a) for a in self._actions]

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
    def rolls_left(self) -> int:
        return 0 if self.is_over else MAX_ROLLS_PER_TURN - self._rolls

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
        return {"players": list(self.players), "actions": self.actions}

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

    def _replay(self, actions: list[dict[str, Any]]) -> None:
        self._reset_derived()
        for action in actions:
            self._apply_checked(action)
        self._actions = actions

    def _check(self, action: Mapping[str, Any]) -> dict[str, Any]:
        """Validate `action` against the current state; return its normalised form."""
        if not isinstance(action, Mapping):
            raise InvalidActionError(f"an action must be an object, got {action!r}")
        kind = action.get("type")
        if kind not in ("roll", "correct", "record"):
            raise InvalidActionError(f"unknown action type {kind!r}; valid: roll, correct, record")
        if self.is_over:
            raise GameOverError("the game is over")
        if kind == "roll":
            dice = _dice(action.get("dice"))
            source = action.get("source", "manual")
            if source not in ROLL_SOURCES:
                raise InvalidActionError(f"roll source must be one of {', '.join(ROLL_SOURCES)}")
            if self._rolls >= MAX_ROLLS_PER_TURN:
                raise RollLimitError(
                    f"{self.current_player_name} has used all {MAX_ROLLS_PER_TURN} rolls; "
                    "choose a category"
                )
            return {"type": "roll", "dice": dice, "source": source}
        if kind == "correct":
            dice = _dice(action.get("dice"))
            if self._dice is None:
                raise NoRollError("there is no roll to correct yet")
            return {"type": "correct", "dice": dice}
        category = _category(action.get("category"))
        if self._dice is None:
            raise NoRollError("roll the dice before choosing a category")
        player = self.current_player
        assert player is not None
        if category in self._sheets[player]:
            raise CategoryUsedError(f"{self.players[player]} has already used {category}")
        return {"type": "record", "category": category}

    def _apply_checked(self, action: Mapping[str, Any]) -> None:
        kind = action["type"]
        if kind == "roll":
            self._rolls += 1
            self._dice = tuple(action["dice"])
        elif kind == "correct":
            self._dice = tuple(action["dice"])
        else:
            player = self.current_player
            assert player is not None and self._dice is not None
            category = action["category"]
            points = _score_valid(self._dice, category)
            self._history.append(
                RecordedTurn(
                    player=player,
                    turn=self.turn or 0,
                    dice=self._dice,
                    rolls=self._rolls,
                    category=category,
                    points=points,
                    used_before=frozenset(self._sheets[player]),
                )
            )
            self._sheets[player][category] = points
            self._rolls = 0
            self._dice = None
