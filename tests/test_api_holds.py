"""The kept-dice API: POST /api/hold, /api/roll with the thrown dice only, /api/choose, and their
refusals, each with its status, code and field."""

from __future__ import annotations

import pytest
from table_helpers import TableClient, built_advisor, shutdown, table_app

from vision.reading import Die, Reading


@pytest.fixture
def client(tmp_path):
    app = table_app(tmp_path, advisor=built_advisor(), camera="replay:test", start=False)
    client = TableClient(app)
    client.new_game(["Ana"])
    yield client
    shutdown(app)


def refused(response, status, code, field):
    body = response.get_json()
    assert response.status_code == status, body
    assert (body["error"]["code"], body["error"]["field"]) == (code, field), body
    return body["error"]["message"]


def test_hold_then_roll_the_thrown_dice_only(client):
    assert client.post("/api/roll", {"dice": [2, 5, 2, 6, 2]}).status_code == 200
    held = client.post("/api/hold", {"positions": [4, 0, 2]}).get_json()["game"]
    assert held["held"] == [0, 2, 4] and held["dice"] == [2, 5, 2, 6, 2] and held["roll_number"] == 1
    game = client.post("/api/roll", {"dice": [2, 2]}).get_json()["game"]
    assert game["dice"] == [2, 2, 2, 2, 2] and game["roll_number"] == 2 and game["held"] == []
    assert game["last_action"] == "roll"
    game = client.post("/api/roll", {"dice": [1, 1, 1, 1, 1]}).get_json()["game"]  # five always fit
    assert game["dice"] == [1, 1, 1, 1, 1] and game["roll_number"] == 3
    game = client.post("/api/record", {"category": "ones"}).get_json()["game"]
    assert game["history"][0]["throws"] == [
        {"dice": [2, 5, 2, 6, 2], "held": []}, {"dice": [2, 2, 2, 2, 2], "held": [0, 2, 4]},
        {"dice": [1, 1, 1, 1, 1], "held": []}]


def test_holds_and_throws_that_cannot_be_are_refused_saying_why(client):
    assert "roll first" in refused(client.post("/api/hold", {"positions": [0]}), 409, "no_roll", None)
    assert "first throw is all five" in refused(client.post("/api/roll", {"dice": [6, 6]}), 409, "first_throw", "dice")
    client.post("/api/roll", {"dice": [1, 2, 3, 4, 5]})
    for positions in ([5], [-1], [0, 0], "01", [True], None):
        refused(client.post("/api/hold", {"positions": positions}), 400, "invalid_hold", "positions")
    refused(client.post("/api/hold", {}), 400, "missing_field", "positions")
    client.post("/api/hold", {"positions": [0, 1]})
    message = refused(client.post("/api/roll", {"dice": [6, 6]}), 409, "throw_mismatch", "dice")
    assert message == "2 dice held, so 3 must be thrown; got 2"
    refused(client.post("/api/roll", {"dice": [6, 6, 7]}), 400, "invalid_dice", "dice")
    assert client.state()["game"]["roll_number"] == 1  # nothing refused changed the game
    client.post("/api/roll", {"dice": [6, 6, 6]})
    client.post("/api/roll", {"dice": [6, 6, 6, 6, 6]})
    refused(client.post("/api/hold", {"positions": [0]}), 409, "roll_limit", None)


def test_the_camera_question_is_answered_once(client):
    table = client.app.extensions["yacht_table"].table
    client.post("/api/roll", {"dice": [1, 2, 3, 5, 6]})
    refused(client.post("/api/choose", {"choice": 0}), 409, "no_question", "choice")
    table.camera_reading(Reading((Die(value=4, x=100.0, y=100.0, size=40.0, angle=0.0, confidence=0.9),), "ok"))
    question = client.state()["camera"]["question"]
    assert question["reason"] == "which_kept" and len(question["choices"]) == 5
    for wrong in (5, -1, "0", True, None):
        refused(client.post("/api/choose", {"choice": wrong}), 400, "invalid_input", "choice")
    game = client.post("/api/choose", {"choice": 1}).get_json()
    assert game["game"]["dice"] == question["choices"][1]["dice"] and game["camera"]["question"] is None
    assert game["game"]["dice_source"] == "camera" and game["camera"]["reading_counted"]
    refused(client.post("/api/choose", {"choice": 0}), 409, "no_question", "choice")
