"""The game views' cache of judged turns: reused while a turn is on screen, bounded over a long run."""

from dataclasses import dataclass
from typing import Any

from scorer import Game
from webui.engine import views
from webui.engine.views import GameViews


@dataclass
class _Advice:
    best_category: str = "choice"
    category_points: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"best_category": self.best_category, "keeps": []}


class CountingAdvisor:
    """Answers at once and counts how often a recorded turn is judged."""

    def __init__(self) -> None:
        self.judged = 0

    def advise(self, used, dice, roll_number):
        return _Advice(category_points=sum(dice))

    def cost_of(self, used, dice, category):
        self.judged += 1
        return 0.0


def _game_with_turns(dice_of_turns: list[list[int]]) -> Game:
    game = Game(["Ana"])
    for dice, category in zip(dice_of_turns, ["choice", "yacht", "ones", "twos"], strict=False):
        game.roll(dice)
        game.record(category)
    return game


def test_a_turn_on_screen_is_judged_once_however_often_the_state_is_drawn():
    advisor = CountingAdvisor()
    game_views = GameViews(advisor)
    game = _game_with_turns([[1, 2, 3, 4, 6], [5, 5, 5, 5, 5]])
    for _ in range(5):
        game_views.view(1, game)
    assert advisor.judged == 2


def test_the_judged_turns_kept_are_bounded_and_the_oldest_go_first(monkeypatch):
    monkeypatch.setattr(views, "JUDGED_TURNS_KEPT", 3)
    advisor = CountingAdvisor()
    game_views = GameViews(advisor)
    games = [_game_with_turns([[value, value, value, value, 1]]) for value in range(2, 7)]
    for game in games:
        game_views.view(1, game)
    assert advisor.judged == 5
    assert len(game_views._judged) == 3
    game_views.view(1, games[-1])  # still kept: not judged again
    assert advisor.judged == 5
    game_views.view(1, games[0])  # gone with the oldest: judged again
    assert advisor.judged == 6
    assert len(game_views._judged) == 3
