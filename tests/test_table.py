"""The table without HTTP: its one write path, its versioned state, and camera throws mixed with
taps keeping the game and its journal in step."""

from __future__ import annotations

import json
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from table_helpers import built_advisor, check_game, table_engine

from hardware.supervisor import CameraState
from scorer import CATEGORIES, GameError
from scorer.actions import Record, Roll, Undo
from vision.reading import Die, Reading
from webui.engine import CorrectDie, NewGame, Throw


def camera_reading(values, status):
    dice = tuple(Die(value=v, x=40.0 * i, y=50.0, size=20.0, angle=0.0, confidence=0.8)
                 for i, v in enumerate(values))
    return Reading(dice=dice, status=status, problems=("glare",) if status == "unsure" else ())


table_events = st.one_of(
    st.tuples(st.just("camera"), st.lists(st.integers(1, 6), min_size=0, max_size=7),
              st.sampled_from(["ok", "ok", "unsure"])),
    st.tuples(st.just("status"), st.sampled_from(["live", "reading", "offline"])),
    st.tuples(st.just("roll"), st.lists(st.integers(1, 6), min_size=5, max_size=5)),
    st.tuples(st.just("record"), st.sampled_from(CATEGORIES)),
    st.tuples(st.just("undo")),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(table_events, min_size=1, max_size=40))
def test_camera_throws_mixed_with_taps_keep_the_game_and_its_journal_in_step(events):
    with tempfile.TemporaryDirectory() as data_dir:
        engine = table_engine(data_dir, advisor=built_advisor(), camera="replay:test", start=False)
        table = engine.table
        try:
            table.apply(table.version, NewGame(["Ana", "Ben"]))
            for event in events:
                before = json.loads(table.state_json())
                try:
                    if event[0] == "camera":
                        counted = table.camera_reading(camera_reading(event[1], event[2]))
                        # fewer than five count when the dice kept aside are certain (all alike)
                        assert not counted or (event[2] == "ok" and 1 <= len(event[1]) <= 5)
                    elif event[0] == "status":
                        table.camera_changed(CameraState(event[1]), "because")
                    elif event[0] == "roll":
                        table.apply(table.version, Roll(event[1]))
                    elif event[0] == "record":
                        table.apply(table.version, Record(event[1]))
                    else:
                        table.apply(table.version, Undo())
                except GameError:
                    assert json.loads(table.state_json()) == before
                state = json.loads(table.state_json())
                assert state["version"] >= before["version"]
                check_game(state["game"])
            game_id = state["game"]["id"]
            rebuilt = table.session.store.load(game_id).view()
            for key in ("sheets", "dice", "roll_number", "current_player"):
                assert rebuilt[key] == state["game"][key]
        finally:
            engine.close()


def camera_of(table) -> dict:
    """The camera's part of the state every tablet is sent."""
    return json.loads(table.state_json())["camera"]


def test_a_roll_typed_after_a_reading_says_the_reading_is_not_of_the_dice_shown(tmp_path):
    engine = table_engine(tmp_path, camera="replay:test", start=False)
    try:
        table = engine.table
        table.apply(table.version, NewGame(["Ana"]))

        table.camera_reading(camera_reading([4, 4, 2], "unsure"))
        assert camera_of(table)["typed_after_reading"] is False
        table.apply(table.version, Throw([4, 4, 2, 1, 6]))  # typed on a tablet: the throw's answer
        assert camera_of(table)["typed_after_reading"] is True
        table.apply(table.version, CorrectDie(4, 5))  # a correction is no new roll: still typed
        assert camera_of(table)["typed_after_reading"] is True
        table.camera_reading(camera_reading([3, 3], "unsure"))  # a new throw is what it talks of
        assert camera_of(table)["typed_after_reading"] is False
    finally:
        engine.close()


def test_a_camera_being_opened_is_said_in_the_players_language_and_only_until_it_is_live(tmp_path):
    engine = table_engine(tmp_path, camera="replay:test", start=False)
    try:
        table = engine.table

        assert camera_of(table)["status"] == "offline"
        assert camera_of(table)["notes"] == [{"code": "opening"}]  # the page words it; the message is for the log
        table.camera_changed(CameraState.LIVE)
        assert camera_of(table)["notes"] == []
    finally:
        engine.close()
