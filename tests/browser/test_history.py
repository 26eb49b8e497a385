"""History worth keeping: a finished game's turns (rolls, holds, the row taken, the advisor's row and
what the choice cost), its date, each player's record across games, and the game as a file."""

from __future__ import annotations

import csv
import io
import json

import pytest

from scorer import CATEGORIES

from .conftest import PHONE, screenshot
from .test_tablet import LOW_CONTRAST, go_to

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need playwright").expect


def play_a_game(table, players, first_turn_held=True):
    """Every row in order; the first player's first turn throws twice, keeping three dice."""
    table.post("/api/games", {"players": players})
    for category in CATEGORIES:
        for player in range(len(players)):
            if category == CATEGORIES[0] and player == 0 and first_turn_held:
                table.post("/api/roll", {"dice": [2, 3, 4, 1, 1]})
                table.post("/api/hold", {"positions": [0, 1, 2]})
                table.post("/api/roll", {"dice": [6, 6]})
            else:
                table.post("/api/roll", {"dice": [6, 6, 6, 6, 6] if player == 0 else [2, 2, 3, 3, 5]})
            table.post("/api/record", {"category": category})


def test_a_finished_game_shows_its_turns_and_is_kept_as_a_file(table, open_page):
    play_a_game(table, ["Ana", "Ben"])
    page = open_page(table.url)
    expect(page.locator("#winner-line")).to_have_text("Ana wins!")
    turns = page.locator("#over-turns .turns-table tbody tr")
    expect(turns).to_have_count(24)
    first = turns.nth(0).locator("td")
    expect(first.nth(2)).to_have_text("2 3 4 1 1 2 3 4 6 6".replace(" ", ""))  # two rolls, digits
    expect(first.nth(2).locator(".roll").nth(1).locator(".held")).to_have_count(3)
    expect(first.nth(3)).to_have_text("Yacht 0")
    expect(first.nth(4)).not_to_have_text("the same")  # a scratched Yacht: the advisor took another row
    assert float(first.nth(5).inner_text()) > 0
    expect(page.locator("#over-turns td", has_text="the same").first).to_be_visible()  # e.g. Sixes with 6 6 6 6 6
    expect(page.locator("#over-turns .turns-head")).to_contain_text("Finished ")
    screenshot(page, "tablet-game-over-turns")
    for theme in ("light", "dark"):
        page.evaluate(f"setTheme('{theme}')")
        assert page.evaluate(LOW_CONTRAST, 4.5) == [], theme

    with page.expect_download() as download:
        page.locator('#over-turns [data-export="csv"]').click()
    rows = list(csv.DictReader(io.StringIO(open(download.value.path(), encoding="utf-8").read())))
    assert len(rows) == 24 and rows[0]["throws"] == "2 3 4 1 1 | [2] [3] [4] 6 6"
    with page.expect_download() as download:
        page.locator('#over-turns [data-export="json"]').click()
    record = json.loads(open(download.value.path(), encoding="utf-8").read())
    assert record["players"] == ["Ana", "Ben"] and len(record["turns"]) == 24 and record["finished"]


def test_each_players_record_across_games_and_a_past_games_turns(table, open_page):
    play_a_game(table, ["Ana", "Ben"])
    play_a_game(table, ["Cy", "Ana"], first_turn_held=False)
    page = open_page(table.url, viewport=PHONE)
    go_to(page, "history")
    stats = page.locator("#player-stats tbody tr")
    expect(stats).to_have_count(3)
    ana = page.locator('#player-stats tr[data-player="Ana"] td')
    expect(ana.nth(1)).to_have_text("2")  # games
    expect(ana.nth(4)).to_have_text("0")  # her Yacht row took 2 3 4 6 6: scratched
    expect(ana.nth(5)).to_have_text("1")  # wins
    expect(page.locator('#player-stats tr[data-player="Cy"] td').nth(4)).to_have_text("1")  # a Yacht
    screenshot(page, "phone-history-stats")
    page.locator("#history-list").get_by_role("button", name="View").last.tap()
    expect(page.locator("#history-detail-turns .turns-table tbody tr")).to_have_count(24)
    expect(page.locator("#history-detail-turns .turns-head")).to_contain_text("Finished ")
    screenshot(page, "phone-history-game-turns")
