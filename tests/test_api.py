"""The JSON API through Flask's test client: every write, every refusal, and the guards."""

from __future__ import annotations

import sqlite3
import threading
from types import SimpleNamespace

import pytest
from table_helpers import TableClient, built_advisor, error_fields, http_json, served, shutdown, table_app

from hardware.supervisor import CameraState
from webui.app import EXTENSION


@pytest.fixture
def make_client(tmp_path):
    apps = []

    def make(**settings):
        app = table_app(tmp_path, advisor=built_advisor(), **settings)
        apps.append(app)
        return TableClient(app, pin=settings.get("pin"))

    yield make
    for app in apps:
        shutdown(app)


@pytest.fixture
def client(make_client):
    return make_client()


def error_of(response, status):
    assert response.status_code == status, response.get_json()
    body = response.get_json()
    assert set(body["error"]) == error_fields(body["error"]["code"])
    assert body["error"]["message"]
    return body["error"]


# --- playing -----------------------------------------------------------------------------------

def test_a_fresh_table_has_no_game_and_no_camera(client):
    state = client.state()
    assert state["game"] is None
    assert state["camera"]["status"] == "off"
    assert state["categories"][0] == "yacht" and len(state["categories"]) == 12


def test_a_turn_by_hand_roll_correct_record(client):
    state = client.new_game(["Ana", "Ben"])
    game = state["game"]
    assert game["players"] == ["Ana", "Ben"] and game["current_player_name"] == "Ana"
    assert game["roll_number"] == 0 and game["dice"] is None and game["advice"] is None

    state = client.post("/api/roll", {"dice": [1, 2, 3, 4, 4]}).get_json()
    game = state["game"]
    assert game["dice"] == [1, 2, 3, 4, 4] and game["dice_source"] == "manual"
    assert game["roll_number"] == 1 and game["rolls_left"] == 2
    assert game["open_scores"]["choice"] == 14
    assert game["advice"]["best_category"] in game["open_scores"]

    state = client.post("/api/correct", {"die": 0, "value": 4}).get_json()
    assert state["game"]["dice"] == [4, 2, 3, 4, 4]
    assert state["game"]["dice_source"] == "corrected" and state["game"]["roll_number"] == 1
    state = client.post("/api/correct", {"dice": [4, 4, 4, 4, 2]}).get_json()

    state = client.post("/api/record", {"category": "four_of_a_kind"}).get_json()
    game = state["game"]
    assert game["sheets"] == [{"four_of_a_kind": 18}, {}] and game["totals"] == [18, 0]
    assert game["current_player_name"] == "Ben" and game["dice"] is None
    entry = game["history"][0]
    assert entry["player_name"] == "Ana" and entry["points"] == 18 and entry["rolls"] == 1
    assert isinstance(entry["cost"], float) and entry["cost"] >= 0


def test_undo_takes_back_the_last_action(client):
    client.new_game(["Ana"])
    client.post("/api/roll", {"dice": [6, 6, 6, 6, 6]})
    client.post("/api/record", {"category": "yacht"})
    state = client.post("/api/undo", {}).get_json()
    assert state["game"]["totals"] == [0] and state["game"]["dice"] == [6, 6, 6, 6, 6]
    client.post("/api/undo", {})
    state = client.state()
    assert state["game"]["dice"] is None and state["game"]["can_undo"] is False
    assert error_of(client.post("/api/undo", {}), 409)["code"] == "nothing_to_undo"


def test_every_change_bumps_the_version(client):
    versions = [client.version, client.new_game()["version"]]
    versions.append(client.post("/api/roll", {"dice": [1, 1, 1, 1, 1]}).get_json()["version"])
    versions.append(client.post("/api/undo", {}).get_json()["version"])
    assert versions == sorted(set(versions))


def test_past_games_are_listed_and_shown(client):
    first = client.new_game(["Ana"])["game"]["id"]
    client.post("/api/roll", {"dice": [2, 2, 2, 3, 3]})
    client.post("/api/record", {"category": "full_house"})
    second = client.new_game(["Ben", "Cy"])["game"]["id"]

    games = client.http.get("/api/games").get_json()["games"]
    assert [g["id"] for g in games] == [second, first]
    assert games[1]["players"] == ["Ana"] and games[1]["totals"] == [12]
    assert games[1]["is_over"] is False and games[1]["finished"] is None and games[1]["started"]

    shown = client.http.get(f"/api/games/{first}").get_json()["game"]
    assert shown["id"] == first and shown["sheets"] == [{"full_house": 12}]
    assert error_of(client.http.get("/api/games/999"), 404)["code"] == "unknown_game"


def test_resume_an_unfinished_game(client):
    first = client.new_game(["Ana"])["game"]["id"]
    client.post("/api/roll", {"dice": [2, 2, 2, 3, 3]})
    client.new_game(["Ben"])
    state = client.post("/api/games/resume", {"game_id": first}).get_json()
    assert state["game"]["id"] == first and state["game"]["dice"] == [2, 2, 2, 3, 3]
    assert error_of(client.post("/api/games/resume", {"game_id": 999}), 404)["field"] == "game_id"
    assert error_of(client.post("/api/games/resume", {"game_id": "1"}), 400)["field"] == "game_id"


def test_a_finished_game_cannot_be_resumed_or_played(client):
    finished = client.new_game(["Ana"])["game"]["id"]
    for category in client.state()["categories"]:
        client.post("/api/roll", {"dice": [3, 3, 3, 3, 3]})
        client.post("/api/record", {"category": category})
    state = client.state()
    assert state["game"]["is_over"] and state["game"]["winners"] == ["Ana"]
    assert error_of(client.post("/api/roll", {"dice": [1, 1, 1, 1, 1]}), 409)["code"] == "game_over"
    assert client.http.get("/api/games").get_json()["games"][0]["finished"] is not None
    client.new_game(["Ben"])
    error = error_of(client.post("/api/games/resume", {"game_id": finished}), 409)
    assert error["code"] == "game_over"


def test_the_game_survives_a_restart(make_client):
    first = make_client()
    first.new_game(["Ana", "Ben"])
    first.post("/api/roll", {"dice": [5, 5, 5, 1, 1]})
    before = first.state()
    shutdown(first.app)
    after = make_client().state()
    assert after["game"] == before["game"]
    assert after["version"] > before["version"]


# --- refusals ------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("path", "body", "status", "code", "field"),
    [
        ("/api/games", {"players": []}, 400, "invalid_players", "players"),
        ("/api/games", {"players": "Ana"}, 400, "invalid_players", "players"),
        ("/api/games", {"players": ["x" * 25]}, 400, "invalid_players", "players"),
        ("/api/games", {"players": ["Ana", "ana"]}, 400, "invalid_players", "players"),
        ("/api/games", {"players": [f"P{i}" for i in range(9)]}, 400, "invalid_players", "players"),
        ("/api/games", {}, 400, "missing_field", "players"),
        ("/api/roll", {"dice": [1, 2, 3, 4]}, 409, "first_throw", "dice"),
        ("/api/roll", {"dice": [1, 2, 3, 4, 5, 6]}, 400, "invalid_dice", "dice"),
        ("/api/roll", {"dice": [1, 2, 3, 4, 7]}, 400, "invalid_dice", "dice"),
        ("/api/roll", {"dice": [1, 2, 3, 4, True]}, 400, "invalid_dice", "dice"),
        ("/api/roll", {"dice": "12345"}, 400, "invalid_dice", "dice"),
        ("/api/roll", {}, 400, "missing_field", "dice"),
        ("/api/correct", {"die": 0, "value": 4}, 409, "no_roll", None),
        ("/api/correct", {}, 400, "missing_field", "dice"),
        ("/api/record", {"category": "yacht"}, 409, "no_roll", None),
        ("/api/record", {"category": "bonus"}, 400, "unknown_category", "category"),
        ("/api/record", {"category": ["yacht"]}, 400, "unknown_category", "category"),
    ],
)
def test_bad_input_is_refused_naming_the_field(client, path, body, status, code, field):
    client.new_game()
    before = client.state()["game"]
    error = error_of(client.post(path, body), status)
    assert (error["code"], error["field"]) == (code, field)
    assert client.state()["game"] == before


def test_bad_corrections(client):
    client.new_game()
    client.post("/api/roll", {"dice": [1, 2, 3, 4, 5]})
    assert error_of(client.post("/api/correct", {"die": 5, "value": 2}), 400)["field"] == "die"
    assert error_of(client.post("/api/correct", {"die": 0, "value": 0}), 400)["field"] == "value"
    assert error_of(client.post("/api/correct", {"die": 0}), 400)["field"] == "value"
    assert error_of(client.post("/api/correct", {"dice": [1, 2]}), 400)["field"] == "dice"
    assert client.state()["game"]["dice"] == [1, 2, 3, 4, 5]


def test_rule_refusals_are_conflicts(client):
    client.new_game(["Ana"])
    for _ in range(3):
        client.post("/api/roll", {"dice": [1, 1, 2, 2, 2]})
    assert error_of(client.post("/api/roll", {"dice": [1, 1, 1, 1, 1]}), 409)["code"] == "roll_limit"
    client.post("/api/record", {"category": "full_house"})
    client.post("/api/roll", {"dice": [1, 1, 2, 2, 2]})
    assert error_of(client.post("/api/record", {"category": "full_house"}), 409)["code"] == "category_used"


def test_writes_without_a_game(client):
    assert error_of(client.post("/api/roll", {"dice": [1, 1, 1, 1, 1]}), 409)["code"] == "no_game"
    assert error_of(client.post("/api/undo", {}), 409)["code"] == "no_game"


def test_a_stale_or_missing_version_changes_nothing(client):
    client.new_game()
    old = client.version
    client.post("/api/roll", {"dice": [1, 1, 1, 1, 1]})
    before = client.state()
    error = error_of(client.post("/api/record", {"category": "yacht", "version": old}, version=None), 409)
    assert (error["code"], error["field"]) == ("stale_version", "version")
    error = error_of(client.post("/api/record", {"category": "yacht"}, version=None), 400)
    assert (error["code"], error["field"]) == ("missing_field", "version")
    error = error_of(client.post("/api/record", {"category": "yacht", "version": "1"}, version=None), 400)
    assert (error["code"], error["field"]) == ("invalid_input", "version")
    assert client.state() == before


def test_malformed_requests(client):
    assert error_of(client.post("/api/roll", data="dice=1,2,3,4,5",
                                content_type="application/x-www-form-urlencoded"), 400)["code"] == "json_required"
    assert error_of(client.post("/api/roll", data="{not json", content_type="application/json"),
                    400)["code"] == "invalid_json"
    assert error_of(client.post("/api/roll", [1, 2, 3]), 400)["code"] == "invalid_json"
    assert error_of(client.http.get("/api/roll"), 405)["code"] == "method_not_allowed"
    assert error_of(client.http.get("/api/nothing-here"), 404)["code"] == "not_found"
    huge = {"players": ["Ana"], "padding": "x" * 20_000}
    assert error_of(client.post("/api/games", huge), 413)["code"] == "too_large"


def test_a_failing_disk_is_a_500_without_a_trace_and_nothing_changes(client, monkeypatch):
    client.new_game()
    before = client.state()
    store = client.app.extensions[EXTENSION].table.session.store

    def disk_full(*args):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store, "append", disk_full)
    response = client.post("/api/roll", {"dice": [1, 2, 3, 4, 5]})
    error = error_of(response, 500)
    assert error["code"] == "internal_error" and "Traceback" not in response.get_data(as_text=True)
    assert client.state() == before


def test_camera_endpoints_without_a_camera(client):
    assert error_of(client.http.get("/api/camera/still.jpg"), 404)["code"] == "no_reading"
    assert error_of(client.http.get("/api/camera.mjpg"), 404)["code"] == "no_camera"


# --- guards --------------------------------------------------------------------------------------

def test_unknown_host_names_are_refused(make_client):
    client = make_client(allowed_hosts=("yacht.home",))
    assert client.http.get("/api/state", headers={"Host": "localhost:8000"}).status_code == 200
    assert client.http.get("/api/state", headers={"Host": "192.168.1.20:8000"}).status_code == 200
    assert client.http.get("/api/state", headers={"Host": "[::1]:8000"}).status_code == 200
    assert client.http.get("/api/state", headers={"Host": "Yacht.Home"}).status_code == 200
    refused = client.http.get("/api/state", headers={"Host": "evil.example:8000"})
    assert error_of(refused, 403)["code"] == "host_not_allowed"


def test_writes_from_another_origin_are_refused(client):
    version = client.version
    body = {"players": ["Ana"], "version": version}
    for headers in ({"Origin": "http://evil.example"}, {"Origin": "null"},
                    {"Origin": "http://localhost:9999"}):
        refused = client.post("/api/games", body, version=None, headers=headers)
        assert error_of(refused, 403)["code"] == "origin_refused"
    refused = client.http.post("/api/games", json=body, headers={"Sec-Fetch-Site": "cross-site"})
    assert error_of(refused, 403)["code"] == "origin_refused"
    assert client.state()["game"] is None
    # No Origin at all (a script such as curl) is fine.
    assert client.http.post("/api/games", json=body).status_code == 201


def test_the_pin_guards_writes_but_not_reads(make_client):
    client = make_client(pin="2468")
    assert client.http.get("/api/state").status_code == 200
    body = {"players": ["Ana"], "version": client.version}
    assert error_of(client.http.post("/api/games", json=body), 403)["code"] == "pin_required"
    wrong = client.http.post("/api/games", json=body, headers={"X-Table-Pin": "1111"})
    assert error_of(wrong, 403)["code"] == "pin_wrong"
    assert client.post("/api/games", body, version=None).status_code == 201


def test_guessing_the_pin_is_locked_out(make_client):
    client = make_client(pin="2468")
    body = {"players": ["Ana"], "version": client.version}
    for guess in range(10):
        client.http.post("/api/games", json=body, headers={"X-Table-Pin": f"{guess:04d}"})
    locked = client.http.post("/api/games", json=body, headers={"X-Table-Pin": "2468"})
    assert error_of(locked, 429)["code"] == "pin_locked"


def test_responses_are_hardened(client):
    response = client.http.get("/api/state")
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Cache-Control"] == "no-store"


# --- two tablets at once ---------------------------------------------------------------------------

def test_two_tablets_racing_to_record_the_same_turn_exactly_one_wins(tmp_path):
    app = table_app(tmp_path, advisor=built_advisor())
    with served(app) as server:
        _, state = http_json("GET", f"{server}/api/state")
        _, state = http_json("POST", f"{server}/api/games", {"players": ["Ana", "Ben"], "version": state["version"]})
        for turn, (category_a, category_b) in enumerate([("choice", "yacht"), ("ones", "ones"),
                                                         ("sixes", "fives"), ("twos", "choice")]):
            _, state = http_json("POST", f"{server}/api/roll",
                                 {"dice": [1, 2, 6, 6, 6], "version": state["version"]})
            start = threading.Barrier(2)
            answers = []

            def tap(category, version=state["version"]):
                start.wait()
                answers.append(http_json("POST", f"{server}/api/record",
                                         {"category": category, "version": version}))

            tablets = [threading.Thread(target=tap, args=(c,)) for c in (category_a, category_b)]
            for tablet in tablets:
                tablet.start()
            for tablet in tablets:
                tablet.join()
            statuses = sorted(status for status, _ in answers)
            assert statuses == [200, 409], answers
            assert [body["error"]["code"] for status, body in answers if status == 409] == ["stale_version"]
            _, state = http_json("GET", f"{server}/api/state")
            assert len(state["game"]["history"]) == turn + 1


@pytest.mark.parametrize("players", [{"Ana": 1}, ["Ana\ud800"], ["Ana\x00"], ["Ana\nBen"]])
def test_names_that_cannot_be_shown_or_stored_are_refused(client, players):
    error = error_of(client.post("/api/games", {"players": players}), 400)
    assert (error["code"], error["field"]) == ("invalid_players", "players")
    assert client.http.get("/api/games").get_json()["games"] == []


def test_a_camera_flicker_does_not_make_a_tap_stale_but_a_game_change_does(client):
    client.new_game(["Ana"])
    seen = client.post("/api/roll", {"dice": [2, 2, 2, 5, 5]}).get_json()["version"]
    table = client.app.extensions[EXTENSION].table
    table.camera_changed(CameraState.READING)
    table.camera_changed(CameraState.UNSURE, "a die is cocked")
    assert client.version == seen + 2
    recorded = client.post("/api/record", {"category": "full_house", "version": seen}, version=None)
    assert recorded.status_code == 200
    error = error_of(client.post("/api/undo", {"version": seen}, version=None), 409)
    assert error["code"] == "stale_version"
    future = error_of(client.post("/api/undo", {"version": client.version + 1}, version=None), 409)
    assert future["code"] == "stale_version"


def test_a_game_whose_journal_does_not_replay_does_not_stop_the_table(make_client, tmp_path):
    first = make_client()
    game_id = first.new_game(["Ana"])["game"]["id"]
    first.post("/api/roll", {"dice": [1, 1, 1, 1, 1]})
    shutdown(first.app)
    raw = sqlite3.connect(tmp_path / "games.sqlite3")
    raw.execute("UPDATE journal SET action = '{\"type\":\"roll\",\"dice\":[7]}' WHERE kind = 'roll'")
    raw.commit()
    raw.close()
    client = make_client()
    assert client.state()["game"] is None
    assert [g["id"] for g in client.http.get("/api/games").get_json()["games"]] == [game_id]
    assert client.new_game(["Ben"])["game"]["players"] == ["Ben"]


def test_never_in_debug_mode_even_when_the_environment_asks(make_client, monkeypatch):
    monkeypatch.setenv("FLASK_DEBUG", "1")
    assert make_client().app.debug is False


def test_the_last_throw_is_served_as_a_still_and_the_preview_streams(tmp_path):
    import cv2
    import numpy as np

    from hardware.fake_camera import FakeCamera
    from vision.reading import Die, Reading

    five = Reading(dice=tuple(Die(value=1, x=40.0 * i, y=50.0, size=20.0, angle=0.0, confidence=0.9)
                              for i in range(5)), status="ok", problems=())
    app = table_app(tmp_path, camera="replay:test", open_camera=FakeCamera().open, start=False,
                    loop_options={"read_dice": lambda image: five, "annotate": lambda image, reading: image})
    client = TableClient(app)
    try:
        assert error_of(client.http.get("/api/camera/still.jpg"), 404)["code"] == "no_reading"
        loop = app.extensions[EXTENSION].loop
        loop.read_now()
        loop.process(SimpleNamespace(image=np.full((240, 320, 3), 90, np.uint8), timestamp=0.0))
        still = client.http.get("/api/camera/still.jpg")
        assert still.status_code == 200 and still.mimetype == "image/jpeg"
        assert cv2.imdecode(np.frombuffer(still.data, np.uint8), cv2.IMREAD_COLOR).shape == (240, 320, 3)
        stream = client.http.get("/api/camera.mjpg", buffered=False)
        assert stream.mimetype == "multipart/x-mixed-replace"
        assert next(iter(stream.response)).startswith(b"--frame\r\nContent-Type: image/jpeg\r\n")
        stream.close()
    finally:
        shutdown(app)

