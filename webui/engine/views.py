"""A game as the tablets see it: the score sheet, where the dice came from, and the advisor's help."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from scorer import Game, RecordedTurn
from scorer.actions import Correct, Roll

log = logging.getLogger(__name__)

# Recorded turns judged, kept most recent first: far more than the turns of the games on screen
# (eight players' twelve turns each), and a bound so a long-running table's memory stays flat.
JUDGED_TURNS_KEPT = 4096


class Advisor(Protocol):
    def advise(self, used: frozenset[str], dice: Sequence[int], roll_number: int) -> Any: ...

    def cost_of(self, used: frozenset[str], dice: Sequence[int], category: str) -> float: ...


class GameViews:
    """Renders games with the advisor's advice and the cost of each recorded choice, both cached:
    the state is rendered again at every camera flicker, and advice is worth computing once."""

    def __init__(self, advisor: Advisor | None):
        self._advisor = advisor
        self._judged: OrderedDict[tuple, dict[str, Any] | None] = OrderedDict()
        self._advice_cache: tuple[tuple, dict[str, Any] | None] | None = None

    def view(self, game_id: int, game: Game, camera_confidence: list[float | None] | None = None) -> dict[str, Any]:
        """`camera_confidence`: per-die confidence of the current roll when the camera read it (None
        for a die held out of its view)."""
        view = game.view()
        del view["actions"]
        source = None
        if game.dice is not None:
            # the roll's own record, or the correction of it (holds since change neither)
            last = next(a for a in reversed(game.actions) if isinstance(a, (Roll, Correct)))
            source = "corrected" if isinstance(last, Correct) else last.source
        view.update(
            id=game_id,
            dice_confidence=camera_confidence if source == "camera" else None,
            dice_source=source,
            can_undo=bool(game.actions),
            last_action=game.actions[-1].to_dict()["type"] if game.actions else None,
            history=[self._history_entry(game, turn) for turn in game.history],
            advice=self._advice(game),
        )
        return view

    def _history_entry(self, game: Game, turn: RecordedTurn) -> dict[str, Any]:
        entry = turn.to_dict()
        del entry["used_before"]
        entry["player_name"] = game.players[turn.player]
        judged = None
        advisor = self._advisor
        if advisor is not None:
            key = (turn.used_before, turn.dice, turn.category)
            if key in self._judged:
                self._judged.move_to_end(key)
            else:
                self._judged[key] = _guarded(lambda: _judge(advisor, *key))
                if len(self._judged) > JUDGED_TURNS_KEPT:
                    self._judged.popitem(last=False)
            judged = self._judged[key]
        entry.update(judged or {"advised": None, "advised_points": None, "cost": None})
        return entry

    def ranked_keeps(self, game: Game) -> list[list[int]]:
        """The advisor's keeps for the current roll, best first (none without an advisor)."""
        advice = self._advice(game)
        return [] if advice is None else [keep["keep"] for keep in advice["keeps"]]

    def _advice(self, game: Game) -> dict[str, Any] | None:
        advisor = self._advisor
        if advisor is None or game.dice is None or game.current_player is None:
            return None
        key = (game.used_categories(game.current_player), game.dice, game.roll_number)
        if self._advice_cache is None or self._advice_cache[0] != key:
            self._advice_cache = (key, _guarded(lambda: advisor.advise(*key).to_dict()))
        return self._advice_cache[1]


def _judge(advisor: Advisor, used: frozenset[str], dice: Sequence[int], category: str) -> dict[str, Any]:
    """The advisor's row for a turn's final dice, its points, and the expected points the row taken
    cost against it (0 when they are the same)."""
    advice = advisor.advise(used, dice, 3)
    return {"advised": advice.best_category, "advised_points": advice.category_points,
            "cost": float(advisor.cost_of(used, dice, category))}


def _guarded(compute: Callable[[], Any]) -> Any:
    """Advice is a help, not the game: a failing advisor is logged and the state goes out without it."""
    try:
        return compute()
    except Exception:
        log.exception("the advisor failed; sending the state without its advice")
        return None
