"""The game: turns, rolls, records, undo, refusals, serialisation."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer import (
    CATEGORIES,
    CategoryUsedError,
    Game,
    GameError,
    GameOverError,
    InvalidActionError,
    InvalidDiceError,
    InvalidPlayersError,
    NoRollError,
    NothingToUndoError,
    RollLimitError,
    UnknownCategoryError,
    score,
)
from scorer.actions import Record


def play_turn(game, dice, category):
    game.roll(dice)
    return game.record(category)


def test_the_seeds_example_turn():
    game = Game(["Ana", "Ben"])
    game.roll([1, 2, 2, 4, 6])
    game.roll([2, 2, 4, 4, 6])
    game.roll([1, 4, 4, 4, 4])
    assert game.roll_number == 3
    assert game.open_scores()["four_of_a_kind"] == 17
    assert game.record("four_of_a_kind") == 17
    assert game.current_player_name == "Ben"
    assert game.turn == 1
    assert game.roll_number == 0
    assert game.dice is None
    assert game.sheets == [{"four_of_a_kind": 17}, {}]


def test_turns_pass_in_fixed_order_and_count_per_player():
    game = Game(["Ana", "Ben", "Cy"])
    for expected_player, expected_turn in [(0, 1), (1, 1), (2, 1), (0, 2)]:
        assert (game.current_player, game.turn) == (expected_player, expected_turn)
        play_turn(game, [1, 2, 3, 4, 5], CATEGORIES[game.turn - 1])


def test_a_fourth_roll_is_refused_and_changes_nothing():
    game = Game(["Ana"])
    for _ in range(3):
        game.roll([1, 1, 2, 3, 4])
    before = game.to_json()
    with pytest.raises(RollLimitError, match="all 3 rolls"):
        game.roll([6, 6, 6, 6, 6])
    assert game.to_json() == before
    assert game.dice == (1, 1, 2, 3, 4)


def test_a_correction_replaces_values_without_counting_a_roll():
    game = Game(["Ana"])
    game.roll([1, 2, 3, 4, 4])
    game.correct([1, 2, 3, 4, 5])
    assert game.roll_number == 1
    assert game.dice == (1, 2, 3, 4, 5)
    assert game.open_scores()["little_straight"] == 30


def test_correction_before_any_roll_is_refused():
    with pytest.raises(NoRollError):
        Game(["Ana"]).correct([1, 2, 3, 4, 5])


def test_record_needs_a_roll():
    with pytest.raises(NoRollError, match="roll the dice"):
        Game(["Ana"]).record("choice")


def test_a_used_category_is_refused():
    game = Game(["Ana"])
    play_turn(game, [3, 3, 3, 6, 6], "full_house")
    game.roll([2, 2, 2, 5, 5])
    before = game.to_json()
    with pytest.raises(CategoryUsedError, match="Ana has already used full_house"):
        game.record("full_house")
    assert game.to_json() == before


def test_any_open_category_can_be_scratched_for_zero():
    game = Game(["Ana"])
    assert play_turn(game, [1, 2, 3, 4, 6], "yacht") == 0
    assert game.sheets[0] == {"yacht": 0}


def test_the_same_category_is_open_to_each_player():
    game = Game(["Ana", "Ben"])
    play_turn(game, [5, 5, 5, 5, 5], "yacht")
    assert play_turn(game, [2, 2, 2, 2, 2], "yacht") == 50
    assert game.totals == [50, 50]


@pytest.mark.parametrize(
    "action, error",
    [
        ({"type": "roll", "dice": [1, 2, 3, 4, 7]}, InvalidDiceError),
        ({"type": "roll", "dice": [1, 2, 3, 4]}, InvalidDiceError),
        ({"type": "roll"}, InvalidDiceError),
        ({"type": "roll", "dice": [1, 2, 3, 4, 5], "source": "psychic"}, InvalidActionError),
        ({"type": "record", "category": "bonus"}, UnknownCategoryError),
        ({"type": "fly"}, InvalidActionError),
        ("roll", InvalidActionError),
    ],
)
def test_malformed_actions_raise_specific_errors(action, error):
    game = Game(["Ana"])
    game.roll([1, 2, 3, 4, 5])
    before = game.to_json()
    with pytest.raises(error):
        game.apply(action)
    assert game.to_json() == before


def test_every_refusal_is_a_value_error_with_a_code():
    for error in (RollLimitError, NoRollError, CategoryUsedError, GameOverError,
                  NothingToUndoError, InvalidDiceError, UnknownCategoryError, InvalidPlayersError):
        assert issubclass(error, GameError) and issubclass(error, ValueError)
        assert error.code != GameError.code


@pytest.mark.parametrize(
    "players, fragment",
    [
        ([], "1 to 8 players, got 0"),
        ([f"P{i}" for i in range(9)], "1 to 8 players, got 9"),
        (["Ana", ""], "player 2's name is empty"),
        (["   "], "player 1's name is empty"),
        (["Ana", "ana"], "names must differ"),
        (["x" * 25], "longer than 24"),
        (["Ana", 7], "must be text"),
        ("Ana", "list of names"),
        (None, "list of names"),
    ],
)
def test_bad_players_are_refused(players, fragment):
    with pytest.raises(InvalidPlayersError, match=fragment):
        Game(players)


def test_names_are_trimmed_and_unicode_is_fine():
    game = Game(["  Zoë  ", "Јован", "x" * 24])
    assert game.players == ("Zoë", "Јован", "x" * 24)


def test_numpy_dice_from_vision_are_accepted_and_stored_as_ints():
    game = Game(["Ana"])
    game.roll(np.array([6, 6, 6, 6, 1], dtype=np.int32), source="camera")
    assert game.dice == (6, 6, 6, 6, 1)
    assert all(type(v) is int for v in game.dice)
    json.loads(game.to_json())


def test_undo_walks_back_to_the_start():
    game = Game(["Ana", "Ben"])
    states = [game.to_json()]
    for dice, category in [([1, 1, 1, 1, 1], "yacht"), ([2, 3, 4, 5, 6], "big_straight")]:
        game.roll(dice)
        states.append(game.to_json())
        game.record(category)
        states.append(game.to_json())
    while states[:-1]:
        states.pop()
        game.undo()
        assert game.to_json() == states[-1]
    with pytest.raises(NothingToUndoError):
        game.undo()


def test_undo_of_a_record_restores_the_turn_and_dice():
    game = Game(["Ana", "Ben"])
    game.roll([3, 3, 3, 6, 6])
    game.roll([3, 3, 3, 6, 6])
    game.record("full_house")
    undone = game.undo()
    assert undone == Record("full_house")
    assert game.current_player_name == "Ana"
    assert game.roll_number == 2
    assert game.dice == (3, 3, 3, 6, 6)
    assert game.sheets == [{}, {}]


def test_a_finished_game_reports_winners_and_refuses_more():
    game = Game(["Ana", "Ben"])
    for category in CATEGORIES:
        play_turn(game, [6, 6, 6, 6, 6], category)
        play_turn(game, [6, 6, 6, 6, 6], category)
    assert game.is_over
    assert game.current_player is None and game.turn is None
    assert game.totals[0] == game.totals[1]
    assert game.winners == ["Ana", "Ben"]
    with pytest.raises(GameOverError):
        game.roll([1, 2, 3, 4, 5])
    game.undo()
    assert not game.is_over and game.winners == []
    assert game.current_player_name == "Ben"


def test_view_is_plain_json():
    game = Game(["Ana", "Ben"])
    game.roll([2, 2, 3, 3, 3])
    view = game.view()
    assert json.loads(json.dumps(view)) == view
    assert view["current_player_name"] == "Ana"
    assert view["roll_number"] == 1 and view["rolls_left"] == 2
    assert view["open_scores"]["full_house"] == 13
    assert view["is_over"] is False


def test_from_json_refuses_garbage():
    for text in ["", "[]", "{}", '{"players": ["A"], "actions": 3}', "not json"]:
        with pytest.raises(GameError):
            Game.from_json(text)


# --- property-based --------------------------------------------------------------------------

dice_st = st.lists(st.integers(1, 6), min_size=5, max_size=5)


@st.composite
def random_game(draw):
    """A game driven to the end by random legal actions, with random refused ones mixed in."""
    players = draw(st.lists(st.sampled_from(["Ana", "Ben", "Cy", "Dee"]), min_size=1, max_size=3,
                            unique=True))
    game = Game(players)
    while not game.is_over:
        rolls = draw(st.integers(1, 3))
        for _ in range(rolls):
            game.roll(draw(dice_st))
        if draw(st.booleans()):
            game.correct(draw(dice_st))
        category = draw(st.sampled_from(game.open_categories(game.current_player)))
        game.record(category)
    return game


@settings(max_examples=30, deadline=None)
@given(random_game())
def test_random_games_end_with_every_row_filled_and_totals_summed(game):
    assert game.is_over
    assert game.records_made == 12 * len(game.players)
    for sheet, total in zip(game.sheets, game.totals):
        assert list(sorted(sheet, key=CATEGORIES.index)) == list(CATEGORIES)
        assert total == sum(sheet.values())
    assert max(game.totals) == game.totals[game.players.index(game.winners[0])]
    for turn in game.history:
        assert turn.points == score(turn.dice, turn.category)


@settings(max_examples=30, deadline=None)
@given(random_game())
def test_replaying_the_actions_gives_the_same_game(game):
    assert Game.from_json(game.to_json()) == game
    assert Game.from_json(game.to_json()).view() == game.view()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["roll", "correct", "record", "undo"]), dice_st,
                          st.sampled_from(CATEGORIES + ("bogus",))), max_size=60))
def test_any_action_either_applies_and_undoes_exactly_or_is_refused_without_change(steps):
    game = Game(["Ana", "Ben"])
    for kind, dice, category in steps:
        before = game.to_json()
        try:
            if kind == "undo":
                game.undo()
                continue
            if kind == "record":
                game.record(category)
            else:
                getattr(game, kind)(dice)
        except GameError:
            assert game.to_json() == before
            continue
        assert game.to_json() != before
        after = game.to_json()
        game.undo()
        assert game.to_json() == before
        game.apply(json.loads(after)["actions"][-1])
        assert game.to_json() == after
