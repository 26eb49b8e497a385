"""A tap acts on what the player saw: a write made against a game that has moved on since is refused
with what changed, and camera status changes alone never make it stale."""

from __future__ import annotations

import pytest
from table_helpers import TableClient, shutdown, table_app, table_engine

from hardware.supervisor import CameraState
from scorer.actions import Record, Roll
from vision.reading import Die, Reading
from webui.engine import InvalidFieldError, NewGame, StaleVersionError


def five_dice(values):
    return Reading(dice=tuple(Die(value=v, x=60.0 * i, y=50.0, size=30.0, angle=0.0, confidence=0.99)
                              for i, v in enumerate(values)), status="ok", problems=())


@pytest.fixture
def table(tmp_path):
    engine = table_engine(tmp_path, camera="replay:test", start=False)
    engine.table.apply(engine.table.version, NewGame(["Ana", "Ben"]))
    yield engine.table
    engine.close()


def seen(table) -> dict:
    """What a tablet shows of the game: the `seen` a page sends with a write."""
    game = table.session.game
    return {"game": table.session.game_id, "turn": game.turn, "player": game.current_player,
            "roll": game.roll_number, "dice": None if game.dice is None else list(game.dice)}


def test_a_record_after_a_camera_throw_landed_is_refused_with_what_changed(table):
    table.apply(table.version, Roll([6, 6, 5, 2, 2]))
    opened_at, shown = table.version, seen(table)  # the Record dialog opens: "Choice: 21 points"
    table.camera_reading(five_dice([6, 6, 4, 2, 2]))  # a throw lands while it is open
    with pytest.raises(StaleVersionError) as refused:
        table.apply(opened_at, Record("choice"), seen=shown)
    assert refused.value.details == {"changed": [
        {"what": "roll", "seen": 1, "now": 2},
        {"what": "dice", "seen": [6, 6, 5, 2, 2], "now": [6, 6, 4, 2, 2]},
    ]}
    assert table.session.game.sheets[0] == {}  # nothing recorded from dice the player never saw


def test_camera_status_changes_alone_never_make_a_tap_stale(table):
    table.apply(table.version, Roll([1, 2, 3, 4, 6]))
    opened_at, shown = table.version, seen(table)
    for state in (CameraState.LIVE, CameraState.READING, CameraState.OFFLINE, CameraState.LIVE):
        table.camera_changed(state, f"now {state.value}")
    table.camera_moving()
    assert table.version > opened_at
    table.apply(opened_at, Record("sixes"), seen=shown)
    assert table.session.game.sheets[0] == {"sixes": 6}


def test_two_tablets_entering_the_same_roll_one_wins_the_other_is_told(table):
    table.apply(table.version, Roll([1, 1, 2, 3, 4]))
    first = second = (table.version, seen(table))  # both open "Enter a roll" on roll 1
    table.apply(first[0], Roll([5, 5, 5, 2, 3]), seen=first[1])
    with pytest.raises(StaleVersionError) as refused:
        table.apply(second[0], Roll([5, 5, 5, 2, 3]), seen=second[1])
    assert {change["what"] for change in refused.value.details["changed"]} == {"roll", "dice"}
    assert table.session.game.roll_number == 2  # one roll 2, not a roll 3
    assert [type(action) for action in table.session.game.actions] == [Roll, Roll]


def test_the_turn_passing_is_what_changed_for_a_tablet_still_on_the_last_one(table):
    table.apply(table.version, Roll([2, 2, 2, 3, 3]))
    shown_at, shown = table.version, seen(table)
    table.apply(table.version, Record("full_house"))
    with pytest.raises(StaleVersionError) as refused:
        table.apply(shown_at, Record("threes"), seen=shown)
    changed = {change["what"]: change for change in refused.value.details["changed"]}
    assert changed["player"] == {"what": "player", "seen": 0, "now": 1}
    assert changed["dice"]["now"] is None


def test_what_was_seen_must_match_even_at_a_current_version(table):
    table.apply(table.version, Roll([2, 2, 2, 3, 3]))
    with pytest.raises(StaleVersionError):
        table.apply(table.version, Record("threes"), seen={**seen(table), "dice": [2, 2, 2, 3, 4]})
    with pytest.raises(InvalidFieldError):
        table.apply(table.version, Record("threes"), seen=[2, 2, 2, 3, 3])
    table.apply(table.version, Record("threes"), seen=seen(table))
    assert table.session.game.sheets[0] == {"threes": 6}


def test_the_refusal_goes_to_the_page_as_409_with_what_changed(tmp_path):
    app = table_app(tmp_path)
    try:
        client = TableClient(app)
        client.post("/api/games", {"players": ["Ana"]})
        client.post("/api/roll", {"dice": [3, 3, 3, 3, 1]})
        state = client.state()
        shown = {"game": state["game"]["id"], "turn": 1, "player": 0, "roll": 1, "dice": [3, 3, 3, 3, 1]}
        client.post("/api/roll", {"dice": [3, 3, 3, 3, 3]})
        response = client.post("/api/record", {"category": "threes", "seen": shown, "version": state["version"]},
                               version=None)
        assert response.status_code == 409
        error = response.get_json()["error"]
        assert error["code"] == "stale_version"
        assert error["changed"] == [{"what": "roll", "seen": 1, "now": 2},
                                    {"what": "dice", "seen": [3, 3, 3, 3, 1], "now": [3, 3, 3, 3, 3]}]
    finally:
        shutdown(app)


def test_a_throw_that_makes_no_roll_never_makes_a_tap_stale(tmp_path):
    # Dice thrown before the game starts, after a player's third roll, or a turn's first throw of
    # fewer than five: the camera says why it did not count, the game is as it was, and the tap
    # made meanwhile ("Start the game", Record) must go through.
    engine = table_engine(tmp_path, camera="replay:test", start=False)
    table = engine.table
    try:
        opened_at = table.version  # the start screen
        table.camera_reading(five_dice([3, 3, 3, 1, 2]))  # no game yet: not counted
        table.apply(opened_at, NewGame(["Ana", "Ben"]))
        opened_at = table.version
        table.camera_reading(Reading(dice=five_dice([4, 4, 2]).dice, status="ok", problems=()))  # 3 dice first
        table.apply(opened_at, Roll([1, 1, 1, 1, 2]))
        for dice in ([1, 1, 1, 1, 3], [1, 1, 1, 1, 4]):
            table.apply(table.version, Roll(dice))
        opened_at, shown = table.version, seen(table)  # the Record dialog, no throw left
        table.camera_reading(five_dice([6, 5, 4, 3, 2]))  # someone throws anyway: not counted
        assert table.session.game.roll_number == 3
        table.apply(opened_at, Record("four_of_a_kind"), seen=shown)
        assert table.session.game.sheets[0] == {"four_of_a_kind": 8}
    finally:
        engine.close()
