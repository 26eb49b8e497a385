"""One journal row that does not replay (a saved roll of 9s) leaves the rest of the game readable:
the valid part is shown with a 4xx naming the bad row, resuming is refused clearly, and the table
still starts when that game was the current one."""

from __future__ import annotations

import sqlite3

from table_helpers import TableClient, built_advisor, shutdown, table_app

from scorer.store import DATABASE_NAME


def play_and_spoil(data_dir) -> tuple[int, int]:
    """A game of 3 recorded turns and a roll, then its second roll row spoilt on disk: (game id,
    the spoilt row's id)."""
    app = table_app(data_dir, advisor=built_advisor())
    client = TableClient(app)
    try:
        game_id = client.new_game()["game"]["id"]
        for dice, category in (([1, 1, 1, 1, 1], "yacht"), ([6, 6, 6, 5, 5], "full_house"), ([2, 2, 3, 4, 5], "twos")):
            assert client.post("/api/roll", {"dice": dice}).status_code == 200
            assert client.post("/api/record", {"category": category}).status_code == 200
        assert client.post("/api/roll", {"dice": [3, 3, 3, 3, 3]}).status_code == 200
    finally:
        shutdown(app)
    database = sqlite3.connect(data_dir / DATABASE_NAME)
    rows = database.execute("SELECT id FROM journal WHERE game_id = ? AND kind = 'roll' ORDER BY id",
                            (game_id,)).fetchall()
    spoilt = rows[1][0]
    database.execute("UPDATE journal SET action = '{\"type\": \"roll\", \"dice\": [9, 9, 9, 9, 9]}' WHERE id = ?",
                     (spoilt,))
    database.commit()
    database.close()
    return game_id, spoilt


def test_a_damaged_game_shows_its_valid_part_and_names_the_bad_row(tmp_path):
    game_id, spoilt = play_and_spoil(tmp_path)
    app = table_app(tmp_path, advisor=built_advisor())
    client = TableClient(app)
    try:
        # The table starts (the damaged game was the current one), without a current game.
        assert client.state()["game"] is None
        listed = client.http.get("/api/games").get_json()["games"]
        assert [game["id"] for game in listed] == [game_id]

        shown = client.http.get(f"/api/games/{game_id}")
        assert shown.status_code == 409
        body = shown.get_json()
        assert body["error"]["code"] == "game_damaged"
        assert f"row {spoilt} (roll)" in body["error"]["message"]
        # The rows before the bad one: the first turn (roll, record) and nothing of the second.
        assert body["error"]["game"]["sheets"] == [{"yacht": 50}, {}]
        assert body["error"]["game"]["players"] == ["Ana", "Ben"]

        resumed = client.post("/api/games/resume", {"game_id": game_id})
        assert resumed.status_code == 409
        assert resumed.get_json()["error"]["code"] == "game_damaged"
        assert f"row {spoilt}" in resumed.get_json()["error"]["message"]
        assert client.state()["game"] is None  # nothing changed
        # The table goes on: a new game starts.
        assert client.new_game()["game"]["id"] != game_id
    finally:
        shutdown(app)


def test_a_damaged_start_row_is_named_too(tmp_path):
    game_id, _ = play_and_spoil(tmp_path)
    database = sqlite3.connect(tmp_path / DATABASE_NAME)
    start = database.execute("SELECT MIN(id) FROM journal WHERE game_id = ?", (game_id,)).fetchone()[0]
    database.execute("UPDATE journal SET action = 'not json' WHERE id = ?", (start,))
    database.commit()
    database.close()
    app = table_app(tmp_path, advisor=built_advisor())
    try:
        shown = app.test_client().get(f"/api/games/{game_id}")
        assert shown.status_code == 409 and f"row {start} (start)" in shown.get_json()["error"]["message"]
        assert "game" not in shown.get_json()["error"]  # nothing replays before the start
    finally:
        shutdown(app)
