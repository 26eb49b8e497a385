"""Players' statistics across finished games."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from scorer import CATEGORIES, Game
from scorer.stats import player_stats


def played(players, dice_for):
    """A whole game: each player's turn n rolls dice_for(player, n) once and takes the n-th row."""
    game = Game(players)
    for turn in range(len(CATEGORIES)):
        for player in range(len(players)):
            game.roll(dice_for(player, turn))
            game.record(CATEGORIES[turn])
    return game


def test_games_average_best_yachts_and_wins_per_player():
    yachts = played(["Ana", "Ben"], lambda player, turn: [6] * 5 if player == 0 else [1, 2, 3, 4, 6])
    plain = played(["Ben", "Cy"], lambda player, turn: [2, 2, 3, 3, 5])
    unfinished = Game(["Ana", "Dee"])
    stats = {player.name: player for player in player_stats([yachts, plain, unfinished])}
    assert set(stats) == {"Ana", "Ben", "Cy"}  # Dee has no finished game
    ana, ben, cy = stats["Ana"], stats["Ben"], stats["Cy"]
    assert (ana.games, ana.best, ana.yachts, ana.wins) == (1, yachts.totals[0], 1, 1)
    assert (ben.games, ben.yachts, ben.wins) == (2, 0, 1)  # Ben and Cy tie in the second: both win
    assert ben.average == (yachts.totals[1] + plain.totals[0]) / 2
    assert ben.best == max(yachts.totals[1], plain.totals[0])
    assert [player.name for player in player_stats([yachts, plain])] == ["Ben", "Ana", "Cy"]
    assert cy.to_dict() == {"name": "Cy", "games": 1, "average": plain.totals[1], "best": plain.totals[1],
                            "yachts": 0, "wins": 1}


@given(st.lists(st.lists(st.integers(1, 6), min_size=5, max_size=5), min_size=2, max_size=2))
def test_a_players_average_lies_between_their_worst_and_best(rolls):
    games = [played(["Ana"], lambda player, turn, dice=dice: dice) for dice in rolls]
    (ana,) = player_stats(games)
    assert min(game.totals[0] for game in games) <= ana.average <= ana.best


def test_a_finished_game_is_exported_with_its_turns_and_counted_in_the_stats(tmp_path):
    import csv
    import io

    from table_helpers import TableClient, built_advisor, shutdown, table_app

    app = table_app(tmp_path, advisor=built_advisor())
    try:
        client = TableClient(app)
        game_id = client.new_game(["Ana"])["game"]["id"]
        client.post("/api/roll", {"dice": [2, 3, 4, 1, 1]})
        client.post("/api/hold", {"positions": [0, 1, 2]})
        client.post("/api/roll", {"dice": [6, 6]})  # the three held, two thrown
        for category in CATEGORIES:
            if category != CATEGORIES[0]:
                client.post("/api/roll", {"dice": [6, 6, 6, 6, 6]})
            client.post("/api/record", {"category": category})

        exported = client.http.get(f"/api/games/{game_id}/export.json")
        assert exported.headers["Content-Disposition"] == f'attachment; filename="yacht-game-{game_id}.json"'
        record = exported.get_json()
        assert record["started"] and record["finished"] and len(record["turns"]) == 12
        first = record["turns"][0]
        assert first["throws"] == [{"dice": [2, 3, 4, 1, 1], "held": []}, {"dice": [2, 3, 4, 6, 6], "held": [0, 1, 2]}]
        assert (first["category"], first["points"]) == ("yacht", 0)
        assert first["advised"] != "yacht" and first["cost"] > 0  # a scratched Yacht cost expected points
        assert [action["type"] for action in record["actions"]][:3] == ["roll", "hold", "roll"]

        text = client.http.get(f"/api/games/{game_id}/export.csv").get_data(as_text=True)
        rows = list(csv.DictReader(io.StringIO(text)))
        assert len(rows) == 12
        assert rows[0]["throws"] == "2 3 4 1 1 | [2] [3] [4] 6 6"
        assert (rows[0]["category"], rows[0]["points"], rows[0]["advised"]) == ("yacht", "0", first["advised"])
        assert float(rows[0]["cost"]) == round(first["cost"], 2)

        (ana,) = client.http.get("/api/stats").get_json()["players"]
        assert (ana["name"], ana["games"], ana["best"], ana["yachts"]) == ("Ana", 1, record["totals"][0], 0)
        assert client.http.get("/api/games/99/export.csv").status_code == 404
    finally:
        shutdown(app)


def test_a_name_a_spreadsheet_would_run_as_a_formula_is_exported_as_text():
    # Names are typed on any tablet at the table; a CSV opened in a spreadsheet runs a cell that
    # starts with = + - @ as a formula (OWASP's CSV injection), so such a cell is made text.
    from webui.engine.export import game_csv

    turn = {"turn": 1, "dice": [1, 2, 3, 4, 5], "category": "little_straight", "points": 30, "throws": []}
    names = ["=HYPERLINK(\"http://x\",\"Ana\")", "+1", "-2", "@SUM(A1)", "Ben"]
    record = {"id": 7, "turns": [dict(turn, player_name=name) for name in names]}
    import csv
    import io

    cells = [row["player"] for row in csv.DictReader(io.StringIO(game_csv(record)))]
    assert cells == ["'" + name for name in names[:4]] + ["Ben"]
