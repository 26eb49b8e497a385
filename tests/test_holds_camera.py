"""Kept dice through the camera, end to end: generated turns of three throws (kept dice set aside
or left in the tray) replayed frame by frame through the settle detector and the real reader into
the table; then any turn, in either style, through the table's camera path."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import cv2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from table_helpers import built_advisor, table_engine

from hardware.fake_camera import FakeCamera
from scorer import Game, RollLimitError
from scorer.actions import Hold, Record, Roll
from vision.reading import Die, Reading
from webui.engine import ChooseThrow, NewGame

SEQUENCES = Path(__file__).resolve().parent.parent / "samples" / "sequences"


def state(table) -> dict:
    return json.loads(table.state_json())


def replay(engine, name: str, between_throws=None) -> tuple[list[dict], dict]:
    """The frames of one generated sequence through the table loop, at their own times; after each
    resting scene is read, `between_throws(number, state)` plays what a player does before the next
    throw. Returns the state after each reading, and the sequence's description."""
    folder = SEQUENCES / name
    if not (folder / "sequence.json").is_file():
        pytest.fail(f"{folder} is missing: run python -m vision.synth --out samples --sequences")
    description = json.loads((folder / "sequence.json").read_text())
    states: list[dict] = []
    for file, t in zip(description["frames"], description["times"]):
        read_before = READ.count
        engine.loop.process(SimpleNamespace(image=cv2.imread(str(folder / file)), timestamp=t))
        if READ.count > read_before:
            states.append(state(engine.table))
            if between_throws is not None:
                between_throws(len(states), states[-1])
    assert len(states) == len(description["rest_starts"]) == 3, [s["camera"]["message"] for s in states]
    return states, description


class CountingReader:
    """The real reader, counting the resting scenes it is asked to read."""

    count = 0

    def __call__(self, image):
        from vision import read_dice

        self.count += 1
        return read_dice(image)


READ = CountingReader()


@pytest.fixture
def engine(tmp_path):
    made = table_engine(tmp_path, advisor=built_advisor(), camera="replay:test", open_camera=FakeCamera().open,
                        start=False, loop_options={"read_dice": READ})
    made.table.apply(made.table.version, NewGame(["Ana", "Ben"]))
    yield made
    made.close()


def positions_of(values, dice):
    """Positions in `dice` showing `values` (a multiset)."""
    wanted, chosen = list(values), []
    for position, value in enumerate(dice):
        if value in wanted:
            wanted.remove(value)
            chosen.append(position)
    assert not wanted, (values, dice)
    return chosen


def test_kept_dice_set_aside_held_first_or_asked_after(engine):
    """Throw two keeps two dice aside after holding them; throw three keeps a third aside with no
    new hold, and the table's question is answered with the keep the player made."""
    table = engine.table
    description = json.loads((SEQUENCES / "kept_aside" / "sequence.json").read_text())
    kept = description["kept_at_rest"]

    def between_throws(number, after):
        if number == 1:
            table.apply(table.version, Hold(positions_of(kept[1], after["game"]["dice"])))
        if number == 3:
            question = after["camera"]["question"]
            assert question["reason"] == "which_kept" and after["game"]["roll_number"] == 2
            (answer,) = [i for i, choice in enumerate(question["choices"])
                         if sorted(choice["dice"][p] for p in choice["held"]) == kept[2]]
            table.apply(table.version, ChooseThrow(answer))

    states, description = replay(engine, "kept_aside", between_throws)
    assert [s["camera"]["reading"]["values"] for s in states] == description["values_at_rest"]
    assert states[1]["camera"]["reading_counted"] and states[1]["game"]["roll_number"] == 2
    assert sorted(states[1]["game"]["dice"]) == description["rolls_at_rest"][1]
    game = state(table)["game"]
    assert game["roll_number"] == 3 and sorted(game["dice"]) == description["rolls_at_rest"][2]
    assert game["dice_source"] == "camera" and game["held"] == []  # holds are for one throw
    rolls = [action for action in table.session.game.actions if isinstance(action, Roll)]
    assert [sorted(roll.dice[p] for p in roll.held) for roll in rolls] == kept
    # the journal says which dice were thrown and which held: the game replays exactly
    assert Game.from_dict(table.session.game.to_dict()).actions == table.session.game.actions


def test_kept_dice_left_in_the_tray_are_told_by_where_they_lie(engine):
    states, description = replay(engine, "kept_in_tray")
    for after, roll, number in zip(states, description["rolls_at_rest"], (1, 2, 3)):
        game = after["game"]
        assert after["camera"]["reading_counted"] and after["camera"]["question"] is None
        assert game["roll_number"] == number and sorted(game["dice"]) == roll
    engine.table.apply(engine.table.version, Record("choice"))
    turn = state(engine.table)["game"]["history"][0]
    # the dice that lay still are the kept ones; a die kept at the second throw is thrown at the third
    assert [sorted(t["dice"][p] for p in t["held"]) for t in turn["throws"]] == description["kept_at_rest"]
    second, third = (set(t["held"]) for t in turn["throws"][1:])
    assert second - third


def test_a_turns_first_throw_of_fewer_dice_and_a_fourth_are_refused_and_change_nothing(engine):
    table = engine.table
    throw = dice_in_cells([(3, 0), (4, 1)])
    assert not table.camera_reading(throw)
    now = state(table)
    assert now["camera"]["notes"] == [{"code": "first_throw_five", "count": 2}] and now["game"]["roll_number"] == 0
    for number in range(3):
        assert table.camera_reading(dice_in_cells([(v, 8 * number + v) for v in (1, 2, 3, 4, 5)]))
    with pytest.raises(RollLimitError):
        table.apply(table.version, Hold([0, 1, 2]))  # no throw left to hold dice for
    assert not table.camera_reading(dice_in_cells([(6, 33), (6, 34)]))
    now = state(table)
    assert now["camera"]["notes"] == [{"code": "rolls_used", "name": "Ana"}] and now["game"]["roll_number"] == 3


# --- any turn, in either style -------------------------------------------------------------------

CELLS = [(40.0 + 70 * column, 40.0 + 70 * row) for row in range(5) for column in range(8)]


def dice_in_cells(dice) -> Reading:
    """Dice (value, cell) read surely; cells are far enough apart that no die is taken for another."""
    return Reading(tuple(Die(value=v, x=CELLS[c][0], y=CELLS[c][1], size=30.0, angle=0.0, confidence=0.9)
                         for v, c in dice), "ok")


rethrows = st.lists(st.tuples(st.sets(st.integers(0, 4), max_size=4), st.sampled_from(["hold", "tray", "ask"]),
                              st.lists(st.integers(1, 6), min_size=5, max_size=5)), min_size=1, max_size=2)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(1, 6), min_size=5, max_size=5), rethrows, st.randoms(use_true_random=False))
def test_any_turn_in_either_style_makes_the_roll_the_player_made(first, throws, rng):
    """What the camera sees of each throw is made from what the player did (kept dice held and set
    aside, set aside and asked about, or left lying in the tray; thrown dice landing where no die
    lay): the roll the table records is always the one made, at once or after one answer."""
    with tempfile.TemporaryDirectory() as data_dir:
        engine = table_engine(data_dir, advisor=built_advisor(), camera="replay:test", start=False)
        table = engine.table
        try:
            table.apply(table.version, NewGame(["Ana"]))

            def landed(values, taken):
                return list(zip(values, rng.sample([c for c in range(len(CELLS)) if c not in taken], len(values))))

            seen = sorted(landed(first, ()), key=lambda die: CELLS[die[1]])
            assert table.camera_reading(dice_in_cells(seen))
            dice = state(table)["game"]["dice"]
            places = {p: cell for p, (_, cell) in enumerate(seen)}  # where the table saw each die lie
            for number, (kept, style, values) in enumerate(throws, start=2):
                kept = sorted(kept)
                thrown = values[:5 - len(kept)]
                if style == "hold":
                    table.apply(table.version, Hold(kept))
                # left in the tray, a kept die lies where it lay; one the table never saw lie (set
                # aside before) is put back among the thrown
                stays = {p: places[p] for p in kept if p in places} if style == "tray" else {}
                put_back = [dice[p] for p in kept if p not in stays] if style == "tray" else []
                fresh = landed(thrown + put_back, set(places.values()))
                seen = sorted([(dice[p], cell) for p, cell in stays.items()] + fresh, key=lambda die: CELLS[die[1]])
                table.camera_reading(dice_in_cells(seen))
                made = sorted([dice[p] for p in kept] + thrown)
                question = state(table)["camera"]["question"]
                if question is not None:
                    assert style == "ask"
                    kept_values = Counter(dice[p] for p in kept)
                    (answer,) = [i for i, choice in enumerate(question["choices"])
                                 if Counter(choice["dice"][p] for p in choice["held"]) == kept_values]
                    table.apply(table.version, ChooseThrow(answer))
                game = state(table)["game"]
                roll = table.session.game.actions[-1]
                assert isinstance(roll, Roll) and game["roll_number"] == number
                assert sorted(game["dice"]) == made, (style, kept, dice, thrown)
                kept_now = sorted(stays) if style == "tray" else kept
                assert list(roll.held) == kept_now or sorted(game["dice"][p] for p in roll.held) == sorted(
                    dice[p] for p in kept_now)
                dice = game["dice"]
                in_tray = sorted((die for die in seen if die[1] not in stays.values()), key=lambda die: CELLS[die[1]])
                places = {p: cell for p, cell in stays.items()} | dict(
                    zip([p for p in range(5) if p not in roll.held], (cell for _, cell in in_tray)))
        finally:
            engine.close()
