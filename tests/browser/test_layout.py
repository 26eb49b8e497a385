"""Eight players on a tablet and on a phone: the current player's column in view, every name
readable, and on a phone the dice and the sheet on one screen."""

from __future__ import annotations

import pytest

from .conftest import PHONE, TABLET, screenshot

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need playwright").expect

EIGHT = ["Alexandra", "Benedikt", "Christophe", "Dominique", "Emmanuelle", "Frederico", "Guilhermina",
         "Maria Fernanda Albuquerq"]  # the last one as long as a name may be (24 characters)
TWO = ["Ana", "Ben"]

# The element a finger at the middle of `node` would touch is `node` (or inside it): on the screen,
# not scrolled out of its box, not under the pinned names column or the bar.
REACHABLE = """(node) => {
  const box = node.getBoundingClientRect();
  const x = box.left + box.width / 2, y = box.top + box.height / 2;
  if (x < 0 || y < 0 || x > innerWidth || y > innerHeight) return false;
  const hit = document.elementFromPoint(x, y);
  return hit !== null && node.contains(hit);
}"""

CUT_NAMES = """() => [...document.querySelectorAll('#sheet thead .player-name')]
  .filter((name) => name.scrollWidth > name.clientWidth + 1 || name.scrollHeight > name.clientHeight + 1
                    || name.closest('th').scrollWidth > name.closest('th').clientWidth + 1)
  .map((name) => name.textContent)"""


def last_players_turn(table, players):
    """Every player but the last has played a turn; the last has rolled."""
    table.post("/api/games", {"players": players})
    for _ in players[:-1]:
        table.post("/api/roll", {"dice": [1, 2, 3, 4, 6]})
        table.post("/api/record", {"category": "choice"})
    table.post("/api/roll", {"dice": [3, 3, 4, 5, 6]})


@pytest.mark.parametrize("players", [EIGHT, TWO], ids=["eight", "two"])
def test_the_last_players_column_is_in_view_on_a_tablet(table, open_page, players):
    last_players_turn(table, players)
    page = open_page(table.url, viewport=TABLET)
    expect(page.locator("#turn-title")).to_have_text(f"{players[-1]}'s turn")
    current = page.locator("#sheet thead th.current")
    expect(current).to_have_text(players[-1])
    assert current.evaluate(REACHABLE)
    best = page.locator("#sheet button.option.best")
    best.scroll_into_view_if_needed()
    assert best.evaluate(REACHABLE)  # the advisor's row is there to tap, not off to the side
    assert page.evaluate(CUT_NAMES) == []
    screenshot(page, f"tablet-{len(players)}-players-last-turn")


@pytest.mark.parametrize("players", [EIGHT, TWO], ids=["eight", "two"])
def test_a_phone_shows_the_dice_and_the_sheet_together(table, open_page, players):
    last_players_turn(table, players)
    page = open_page(table.url, viewport=PHONE)
    expect(page.locator("#turn-title")).to_have_text(f"{players[-1]}'s turn")
    assert page.locator("#standings").bounding_box()["height"] <= 60  # one line of players
    assert page.locator("#standings .current").evaluate(REACHABLE)
    first_row = page.locator('#sheet tbody tr').first
    assert first_row.bounding_box()["y"] + first_row.bounding_box()["height"] <= PHONE["height"]
    dice = [page.locator(f'#dice [data-die="{i}"]') for i in range(5)]
    assert all(die.evaluate(REACHABLE) for die in dice)
    assert page.locator("#sheet thead th.current").evaluate(REACHABLE)
    screenshot(page, f"phone-{len(players)}-players-last-turn")

    # Down at the bottom of the sheet the dice are still in sight, and so is the current column.
    page.locator("#sheet tfoot").scroll_into_view_if_needed()
    assert all(die.evaluate(REACHABLE) for die in dice)
    ones = page.locator('#sheet button.option[data-category="ones"]')
    assert ones.evaluate(REACHABLE)
    assert page.evaluate(CUT_NAMES) == []
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.screenshot(path=str(screenshot(page, f"phone-{len(players)}-players-scrolled")), full_page=False)


def test_eight_long_names_leave_the_dice_the_buttons_and_the_advisor_in_view_on_a_tablet(table, open_page):
    players = [f"Player number {n} longname" for n in range(1, 9)]  # 24 characters each
    last_players_turn(table, players)
    page = open_page(table.url, viewport=TABLET)
    expect(page.locator("#turn-title")).to_have_text(f"{players[-1]}'s turn")
    assert page.locator("#standings").bounding_box()["height"] <= 60  # one line of players, not eight
    assert page.locator("#standings .current").evaluate(REACHABLE)
    assert all(page.locator(f'#dice [data-die="{i}"]').evaluate(REACHABLE) for i in range(5))
    assert page.locator("#manual-roll").evaluate(REACHABLE)
    assert page.locator("#advice h3").evaluate(REACHABLE)
    screenshot(page, "tablet-8-long-names")


# Each camera status the pill can say, in the bar as it is: the texts cut (or wider than their
# pill, or over the Undo button next to it) and how close the labels under the dice come to their buttons' edges.
CAMERA_WORDS = """(texts) => {
  const text = $('camera-pill-text'), pill = $('camera-pill'), undo = $('undo-button');
  const cut = texts.filter((words) => {
    text.textContent = words;
    return text.scrollWidth > text.clientWidth + 1 || text.scrollHeight > text.clientHeight + 1
      || pill.getBoundingClientRect().right > undo.getBoundingClientRect().left;
  });
  const margins = [...document.querySelectorAll('.play-actions > .button:not([hidden])')].map((button) => {
    const words = document.createRange();
    words.selectNodeContents(button);
    const box = button.getBoundingClientRect(), label = words.getBoundingClientRect();
    return Math.min(label.left - box.left, box.right - label.right);
  });
  return { cut, margin: Math.min(...margins) };
}"""


def test_the_camera_words_fit_on_a_phone_in_every_language(tmp_path, advisor, open_page):
    from webui.i18n import LANGUAGES, load_catalog

    from .conftest import LiveTable

    # a camera: its button shows
    with LiveTable(data_dir=tmp_path / "data", advisor=advisor, source="demo") as live:
        live.post("/api/games", {"players": ["Ana", "Ben"]})
        page = open_page(live.url, viewport=PHONE)
        expect(page.locator("#camera-button")).to_be_visible()
        for language in LANGUAGES:
            catalog = load_catalog(language)
            page.evaluate("(language) => setLanguage(language)", language)
            words = page.evaluate(CAMERA_WORDS, [text for key, text in catalog.items() if key.startswith("cam.")])
            assert words["cut"] == [], language
            assert words["margin"] >= 6, language  # each label clear of its button's border
            page.evaluate("(words) => { $('camera-pill-text').textContent = words; }", catalog["cam.demo"])
            screenshot(page, f"phone-camera-words-{language}")
