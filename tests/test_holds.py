"""Kept dice: holds, a throw of some of the dice made into a roll of five, and kept dice told apart
from thrown ones either by the holds or by where the dice lie; then the same in the game."""

from collections import Counter
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer import (
    FirstThrowError,
    Game,
    InvalidDiceError,
    InvalidHoldError,
    NoRollError,
    Roll,
    RollLimitError,
    ThrowMismatchError,
)
from scorer.advisor import Advisor
from scorer.holds import (
    HoldError,
    KeptChoice,
    check_held,
    compose_roll,
    kept_choices,
    match_places,
    same_scene,
    throw_choices,
    tray_throw,
    validate_positions,
    validate_thrown,
)

faces = st.integers(1, 6)
rolls = st.lists(faces, min_size=5, max_size=5).map(tuple)
position_sets = st.sets(st.integers(0, 4)).map(lambda s: tuple(sorted(s)))


@dataclass(frozen=True)
class Seen:
    value: int | None
    x: float
    y: float
    size: float = 40.0
    angle: float = 0.0


# --- holds and composing a roll --------------------------------------------------------------------


def test_positions_are_distinct_whole_numbers_from_0_to_4():
    assert validate_positions([3, 0]) == (0, 3)
    assert validate_positions([]) == ()
    for wrong, message in (([5], "0 to 4"), ([-1], "0 to 4"), ([True], "0 to 4"), ([1.0], "0 to 4"),
                           ([2, 2], "given twice"), ("02", "a list"), (None, "a list"), ({0: 1}, "a list")):
        with pytest.raises(HoldError, match=message):
            validate_positions(wrong)


def test_a_throw_is_of_one_to_five_valid_dice():
    assert validate_thrown([6, 1]) == (6, 1)
    for wrong, message in (([], "1 to 5 dice"), ([1] * 6, "1 to 5 dice"), ([7], "from 1 to 6"),
                           ([2, "3"], "whole number"), ("12", "a list"), (3, "a list")):
        with pytest.raises(HoldError, match=message):
            validate_thrown(wrong)


def test_the_seeds_turn_with_held_dice():
    # Ana rolls 1-2-2-4-6, keeps the 2s and rolls 4-4-6; then keeps the 4s and rolls 1-4-4.
    second = compose_roll((1, 2, 2, 4, 6), (1, 2), (4, 4, 6))
    assert second == (4, 2, 2, 4, 6)
    third = compose_roll(second, (0, 3), (1, 4, 4))
    assert third == (4, 1, 4, 4, 4) and sorted(third) == [1, 4, 4, 4, 4]


@given(rolls, position_sets, st.data())
def test_held_dice_keep_their_places_and_the_thrown_fill_the_rest_in_order(previous, held, data):
    thrown = data.draw(st.lists(faces, min_size=5 - len(held), max_size=5 - len(held)))
    roll = compose_roll(previous, held, thrown)
    assert all(roll[p] == previous[p] for p in held)
    assert [roll[p] for p in range(5) if p not in held] == thrown
    check_held(previous, held, roll)


@given(rolls, position_sets, st.integers(0, 5))
def test_thrown_dice_that_do_not_fit_the_holds_are_refused(previous, held, count):
    if count == 5 - len(held):
        return
    with pytest.raises(HoldError, match=f"{len(held)} di(e|ce) held, so {5 - len(held)} must be thrown"):
        compose_roll(previous, held, [1] * count)


def test_a_roll_record_whose_held_dice_changed_is_refused():
    check_held((1, 2, 3, 4, 5), (0, 1), (1, 2, 6, 6, 6))
    with pytest.raises(HoldError, match="die 1 showed 2, not 5"):
        check_held((1, 2, 3, 4, 5), (0, 1), (1, 5, 6, 6, 6))
    with pytest.raises(HoldError, match="first throw is all five"):
        check_held(None, (0,), (1, 2, 3, 4, 5))
    check_held(None, (), (1, 2, 3, 4, 5))


# --- kept dice left the tray: which were kept? --------------------------------------------------------


@given(rolls, st.integers(1, 4), st.data())
def test_the_roll_actually_made_is_always_among_the_choices(previous, thrown_count, data):
    kept = data.draw(st.sets(st.integers(0, 4), min_size=5 - thrown_count, max_size=5 - thrown_count))
    thrown = data.draw(st.lists(faces, min_size=thrown_count, max_size=thrown_count))
    truth = compose_roll(previous, tuple(kept), thrown)
    choices = kept_choices(previous, thrown)
    assert sorted(truth) in [sorted(choice.dice) for choice in choices]
    kept_values = [tuple(sorted(previous[p] for p in choice.held)) for choice in choices]
    assert len(set(kept_values)) == len(kept_values), "each set of kept values is offered once"
    for choice in choices:
        assert len(choice.held) == 5 - thrown_count
        assert choice.dice == compose_roll(previous, choice.held, thrown)
        # the thrown dice lie in the tray in the order seen; the kept ones are out of view
        assert [choice.lying[p] for p in choice.held] == [None] * len(choice.held)
        assert [choice.lying[p] for p in choice.thrown] == list(range(thrown_count))


@given(rolls, st.integers(1, 4), st.data())
def test_holds_of_the_right_number_say_which_were_kept(previous, thrown_count, data):
    held = tuple(sorted(data.draw(st.sets(st.integers(0, 4), min_size=5 - thrown_count,
                                          max_size=5 - thrown_count))))
    thrown = data.draw(st.lists(faces, min_size=thrown_count, max_size=thrown_count))
    assert kept_choices(previous, thrown, held) == (KeptChoice(held, compose_roll(previous, held, thrown)),)


def test_when_every_way_of_keeping_gives_the_same_roll_there_is_one_choice():
    assert kept_choices((3, 3, 3, 3, 3), (6, 1)) == (KeptChoice((0, 1, 2), (3, 3, 3, 6, 1)),)
    assert kept_choices((1, 2, 3, 4, 5), (2, 2, 2, 2, 2)) == (KeptChoice((), (2, 2, 2, 2, 2)),)


def test_the_advisors_keep_of_the_right_size_comes_first_then_the_fewest_taps_from_the_holds():
    previous = (1, 2, 2, 4, 6)
    ranked = [(6,), (2, 2), (1, 2, 2), (4, 6), (2, 4), (2, 6), (1, 2)]
    choices = kept_choices(previous, (4, 4, 6), ranked_keeps=ranked)
    assert choices[0] == KeptChoice((1, 2), (4, 2, 2, 4, 6), advised=True)
    assert [sorted(previous[p] for p in c.held) for c in choices[1:4]] == [[4, 6], [2, 4], [2, 6]]
    assert sum(c.advised for c in choices) == 1 and len(choices) == 7
    # holding the 4 (position 3) before throwing three: the keeps with the 4 come straight after
    held_four = kept_choices(previous, (4, 4, 6), holds=(3,), ranked_keeps=ranked)
    assert held_four[0].advised and held_four[0].held == (1, 2)
    assert all(3 in c.held for c in held_four[1:4]) and 3 not in held_four[4].held


def test_with_the_real_advisor_the_seeds_keep_of_the_twos_is_offered_first():
    previous = (1, 2, 2, 4, 6)
    advice = Advisor.build().advise([], previous, 1)
    keeps = [keep for keep, _ in advice.keeps]
    choices = kept_choices(previous, (4, 4, 6), ranked_keeps=keeps)
    best_pair = next(keep for keep in keeps if len(keep) == 2)
    assert choices[0].advised and sorted(previous[p] for p in choices[0].held) == list(best_pair)
    assert sorted(choices[0].dice) == sorted((*best_pair, 4, 4, 6))


# --- kept dice stayed in the tray: which lay still? ----------------------------------------------------

# Dice lie on the cells of a grid two die sizes apart, so no two touch and a die moved to another
# cell is never within half its size of where it was.
CELLS = [(60.0 + 80 * col, 60.0 + 80 * row) for row in range(4) for col in range(6)]


def placed(values, cells, jitter=0.0):
    return [Seen(v, CELLS[c][0] + jitter, CELLS[c][1] - jitter) for v, c in zip(values, cells)]


@given(rolls, st.data())
def test_dice_left_where_they_lay_are_kept_and_the_others_thrown(previous, data):
    cells = data.draw(st.permutations(range(len(CELLS)))).copy()
    before_cells, free = cells[:5], cells[5:]
    stayed = data.draw(st.sets(st.integers(0, 4), max_size=4))
    thrown_values = data.draw(st.lists(faces, min_size=5 - len(stayed), max_size=5 - len(stayed)))
    jitter = data.draw(st.floats(-9.0, 9.0))
    places = dict(enumerate(placed(previous, before_cells)))
    seen = [*placed([previous[p] for p in sorted(stayed)], [before_cells[p] for p in sorted(stayed)], jitter),
            *placed(thrown_values, free)]
    order = data.draw(st.permutations(range(5)))
    seen = [seen[i] for i in order]
    throw = tray_throw(previous, places, seen)
    assert throw.unmoved == tuple(sorted(stayed)) and not throw.bumped
    assert Counter(throw.thrown) == Counter(thrown_values)
    (choice,) = throw.choices(previous)
    assert choice.held == tuple(sorted(stayed)) and Counter(choice.dice) == Counter(d.value for d in seen)
    assert sorted(choice.lying) == [0, 1, 2, 3, 4]
    assert [seen[j].value for j in choice.lying] == list(choice.dice)
    assert all(seen[choice.lying[p]] == places[p] or seen[choice.lying[p]].x == places[p].x + jitter
               for p in stayed)


def test_a_kept_die_showing_another_face_is_offered_both_ways_put_back_first():
    previous = (5, 5, 5, 2, 1)
    places = dict(enumerate(placed(previous, [0, 1, 2, 3, 4])))
    seen = [*placed([5, 5, 3], [0, 1, 2], jitter=4.0), *placed([6, 6], [10, 11])]
    throw = tray_throw(previous, places, seen)
    assert throw.unmoved == (0, 1) and throw.bumped == {2: 3} and throw.thrown == (6, 6)
    put_back, as_they_lie = throw.choices(previous)
    assert put_back == KeptChoice((0, 1, 2), (5, 5, 5, 6, 6))
    assert as_they_lie == KeptChoice((0, 1), (5, 5, 3, 6, 6))
    assert put_back.lying == as_they_lie.lying == (0, 1, 2, 3, 4)


def test_a_die_with_another_face_near_a_spot_but_not_lying_as_that_die_did_was_thrown():
    previous = (5, 5, 5, 2, 1)
    places = dict(enumerate(placed(previous, [0, 1, 2, 3, 4])))
    x, y = CELLS[2]
    for lying in (Seen(3, x + 15, y), Seen(3, x, y - 11), Seen(3, x, y, angle=30.0)):
        throw = tray_throw(previous, places, [*placed([5, 5], [0, 1]), lying, *placed([6, 6], [10, 11])])
        assert throw.unmoved == (0, 1) and throw.bumped == {} and sorted(throw.thrown) == [3, 6, 6]
    turned_a_quarter = Seen(3, x + 2, y, angle=87.0)
    throw = tray_throw(previous, places, [*placed([5, 5], [0, 1]), turned_a_quarter, *placed([6, 6], [10, 11])])
    assert throw.bumped == {2: 3}


def test_dice_with_no_place_count_as_thrown():
    previous = (2, 2, 4, 4, 6)
    places = dict(enumerate(placed([4, 4, 6], [0, 1, 2]), start=2))  # dice 0 and 1 were entered by hand
    seen = placed([4, 4, 2, 2, 1], [0, 1, 7, 8, 9])
    throw = tray_throw(previous, places, seen)
    assert throw.unmoved == (2, 3) and throw.thrown == (2, 2, 1)
    assert throw.choices(previous) == (KeptChoice((2, 3), (2, 2, 4, 4, 1)),)


def test_a_turns_first_throw_is_five_dice_in_the_order_seen():
    seen = placed([6, 1, 3, 3, 2], [4, 0, 9, 2, 7])
    assert throw_choices(None, (), {}, seen) == (KeptChoice((), (6, 1, 3, 3, 2)),)
    for count in range(1, 5):
        with pytest.raises(HoldError, match=f"first throw is all five dice; {count} seen"):
            throw_choices(None, (), {}, seen[:count])


def test_a_throw_of_five_is_told_by_place_and_fewer_by_the_holds():
    previous = (2, 2, 4, 4, 6)
    places = dict(enumerate(placed(previous, [0, 1, 2, 3, 4])))
    in_tray = throw_choices(previous, (), places, [*placed([2, 2], [0, 1]), *placed([5, 5, 5], [9, 10, 11])])
    assert in_tray == (KeptChoice((0, 1), (2, 2, 5, 5, 5)),)
    aside = throw_choices(previous, (0, 1), places, placed([5, 5, 5], [9, 10, 11]))
    assert aside == (KeptChoice((0, 1), (2, 2, 5, 5, 5)),) and aside[0].lying == (None, None, 0, 1, 2)
    nothing_moved = throw_choices(previous, (), places, placed(previous, [0, 1, 2, 3, 4]))
    assert nothing_moved[0].nothing_thrown and nothing_moved[0].dice == previous


def test_telling_kept_dice_by_place_takes_five_dice_read():
    with pytest.raises(HoldError, match="five dice read"):
        tray_throw((1, 2, 3, 4, 5), {}, placed([1, 2, 3, 4], [0, 1, 2, 3]))
    with pytest.raises(HoldError, match="five dice read"):
        tray_throw((1, 2, 3, 4, 5), {}, [*placed([1, 2, 3, 4], [0, 1, 2, 3]), Seen(None, 500, 300)])


@given(st.lists(st.tuples(faces, st.integers(0, len(CELLS) - 1)), min_size=1, max_size=6,
                unique_by=lambda d: d[1]), st.floats(-19.0, 19.0), st.data())
def test_the_same_dice_in_the_same_places_are_the_same_scene_in_any_order(dice, jitter, data):
    before = [Seen(v, CELLS[c][0], CELLS[c][1]) for v, c in dice]
    after = [Seen(v, CELLS[c][0] + jitter, CELLS[c][1] + jitter) for v, c in dice]
    shuffled = data.draw(st.permutations(after))
    assert same_scene(before, shuffled)
    assert match_places(before, shuffled) == {j: after.index(die) for j, die in enumerate(shuffled)}
    turned = [Seen(die.value % 6 + 1, die.x, die.y) if j == 0 else die for j, die in enumerate(shuffled)]
    assert not same_scene(before, turned)
    assert not same_scene(before, shuffled[1:])
    moved = [Seen(die.value, die.x + 41.0, die.y) if j == 0 else die for j, die in enumerate(shuffled)]
    assert not same_scene(before, moved)


def test_a_die_between_two_places_goes_to_the_nearer():
    before = [Seen(3, 100, 100), Seen(3, 130, 100)]
    assert match_places(before, [Seen(3, 122, 100)]) == {0: 1}
    assert match_places(before, [Seen(3, 122, 100), Seen(3, 112, 100)]) == {0: 1, 1: 0}


# --- holds in the game ----------------------------------------------------------------------------------


def test_the_seeds_turn_played_with_holds_and_thrown_dice_only():
    game = Game(["Ana", "Ben"])
    game.apply(game.roll_of_throw([1, 2, 2, 4, 6]))
    game.hold([2, 1])
    assert game.held == (1, 2) and game.view()["held"] == [1, 2]
    game.apply(game.roll_of_throw([4, 4, 6]))
    assert game.dice == (4, 2, 2, 4, 6) and game.held == (), "holds are for one throw"
    with pytest.raises(ThrowMismatchError, match="0 dice held, so 5 must be thrown; got 3"):
        game.roll_of_throw([1, 4, 4])  # the 2s held before say nothing of this throw
    game.hold([0, 3])
    game.apply(game.roll_of_throw([1, 4, 4]))
    assert game.dice == (4, 1, 4, 4, 4) and game.roll_number == 3
    assert game.record("four_of_a_kind") == 17
    assert game.held == () and game.current_player_name == "Ben"
    (turn,) = game.history
    assert [(t.dice, t.held) for t in turn.throws] == [
        ((1, 2, 2, 4, 6), ()), ((4, 2, 2, 4, 6), (1, 2)), ((4, 1, 4, 4, 4), (0, 3))]
    assert turn.to_dict()["throws"][1] == {"dice": [4, 2, 2, 4, 6], "held": [1, 2]}
    rolls = [action.to_dict() for action in game.actions if isinstance(action, Roll)]
    assert rolls[1] == {"type": "roll", "dice": [4, 2, 2, 4, 6], "source": "manual", "held": [1, 2]}
    assert Game.from_json(game.to_json()) == game


def test_holds_are_refused_before_a_roll_after_the_last_one_and_out_of_range():
    game = Game(["Ana"])
    with pytest.raises(NoRollError, match="roll first"):
        game.hold([0])
    game.roll([1, 2, 3, 4, 5])
    for wrong in ([5], [-1], [0, 0], "01", [True]):
        with pytest.raises(InvalidHoldError):
            game.hold(wrong)
    game.roll([1, 2, 3, 4, 5])
    game.roll([1, 2, 3, 4, 5])
    with pytest.raises(RollLimitError, match="no throw left"):
        game.hold([0])
    game.record("choice")
    with pytest.raises(NoRollError):
        game.hold([0])
    assert len(game.actions) == 4


def test_a_throw_that_does_not_fit_the_holds_is_refused_and_five_dice_always_fit():
    game = Game(["Ana"])
    with pytest.raises(FirstThrowError, match="first throw is all five dice; got 2"):
        game.roll_of_throw([6, 6])
    game.roll([1, 2, 3, 4, 5])
    game.hold([0, 1, 2])
    with pytest.raises(ThrowMismatchError, match="3 dice held, so 2 must be thrown; got 3") as refused:
        game.roll_of_throw([6, 6, 6])
    assert refused.value.field == "dice"
    with pytest.raises(InvalidDiceError):
        game.roll_of_throw([6, 7])
    with pytest.raises(InvalidDiceError, match="1 to 5 dice"):
        game.roll_of_throw([])
    assert game.roll_of_throw([6, 6, 6, 6, 6]) == Roll((6, 6, 6, 6, 6), "manual")
    assert game.roll_of_throw([6, 6], "camera") == Roll((1, 2, 3, 6, 6), "camera", (0, 1, 2))


def test_a_roll_record_must_keep_its_held_dice_and_throw_at_least_one():
    game = Game(["Ana"])
    with pytest.raises(FirstThrowError, match="first throw is all five"):
        game.roll([1, 2, 3, 4, 5], held=[0])
    game.roll([1, 2, 3, 4, 5])
    with pytest.raises(ThrowMismatchError, match="die 0 showed 1, not 6"):
        game.roll([6, 2, 3, 4, 5], held=[0])
    with pytest.raises(InvalidHoldError, match="at least one die"):
        game.roll([1, 2, 3, 4, 5], held=[0, 1, 2, 3, 4])
    game.hold([4])
    game.roll([1, 2, 6, 6, 6], held=[1, 0])
    assert game.held == () and game.actions[-1] == Roll((1, 2, 6, 6, 6), "manual", (0, 1))


def test_undo_takes_back_a_hold_and_a_roll_restores_the_holds_before_it():
    game = Game(["Ana"])
    game.roll([1, 2, 3, 4, 5])
    game.hold([4])
    game.hold([3, 4])
    game.undo()
    assert game.held == (4,)
    game.apply(game.roll_of_throw([6, 6, 6, 6]))
    assert game.held == ()
    game.undo()
    assert game.held == (4,) and game.dice == (1, 2, 3, 4, 5) and game.roll_number == 1


def test_a_journal_from_before_holds_loads_with_every_die_thrown():
    old = '{"players":["Ana"],"actions":[{"type":"roll","dice":[1,2,3,4,5],"source":"camera"}]}'
    game = Game.from_json(old)
    assert game.held == () and game.history == [] and game.actions[0] == Roll((1, 2, 3, 4, 5), "camera", ())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sets(st.integers(0, 4), max_size=4), st.lists(faces, min_size=5, max_size=5),
                          st.booleans()), min_size=1, max_size=20))
def test_any_turns_of_holds_and_throws_keep_the_held_dice_and_replay_exactly(steps):
    game = Game(["Ana", "Ben"])
    for held, values, record in steps:
        if game.roll_number == 0 or game.rolls_left == 0 or record:
            if game.dice is not None:
                game.record(game.open_categories(game.current_player)[0])
            if game.is_over:
                break
            game.apply(game.roll_of_throw(values))
            continue
        before = game.dice
        game.hold(sorted(held))
        game.apply(game.roll_of_throw(values[:5 - len(held)]))
        assert all(game.dice[p] == before[p] for p in held) and game.actions[-1].held == tuple(sorted(held))
        assert [game.dice[p] for p in range(5) if p not in held] == values[:5 - len(held)]
    again = Game.from_json(game.to_json())
    assert again == game and again.view() == game.view()
