"""Fewer taps and clearer ones: a roll typed in six taps, an Undo that names what it takes back, and
the language and the light or dark look changed in the middle of a game."""

from __future__ import annotations

import re

import pytest

from .conftest import PHONE, record_measurement, screenshot
from .test_tablet import LOW_CONTRAST, enter_roll_by_taps, record_by_taps

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need playwright").expect

COUNT_TAPS = "window.taps = 0; document.addEventListener('touchstart', () => window.taps++, true)"


def taps(page) -> int:
    count = page.evaluate("window.taps")
    page.evaluate("window.taps = 0")
    return count


def test_a_typed_roll_takes_six_taps_and_a_turn_eight(table, open_page):
    table.post("/api/games", {"players": ["Ana", "Ben"]})
    page = open_page(table.url)
    expect(page.locator("#turn-title")).to_have_text("Ana's turn")
    page.evaluate(COUNT_TAPS)
    enter_roll_by_taps(page, [3, 3, 5, 5, 5])
    expect(page.locator("#roll-line")).to_have_text("Roll 1 of 3")
    assert table.state()["game"]["dice"] == [3, 3, 5, 5, 5]
    roll_taps = taps(page)
    record_by_taps(page, "full_house", 21, 0)
    record_taps = taps(page)
    expect(page.locator("#turn-title")).to_have_text("Ben's turn")
    record_measurement("taps_per_turn", {"typed_roll": roll_taps, "record": record_taps,
                                         "turn": roll_taps + record_taps})
    assert (roll_taps, record_taps) == (6, 2)

    # A wrong value is taken back by tapping its place; the next value fills it.
    page.locator("#manual-roll").tap()
    for value in (2, 4):
        page.locator(f'#manual-keys [data-value="{value}"]').tap()
    page.locator('#manual-slots [data-die="0"]').tap()
    expect(page.locator('#manual-slots [data-die="0"]')).to_have_attribute("data-value", "")
    screenshot(page, "tablet-keypad")
    for value in (1, 6, 6, 6):
        page.locator(f'#manual-keys [data-value="{value}"]').tap()
    expect(page.locator("#roll-line")).to_have_text("Roll 1 of 3")
    # the roll line said so before the correction too: wait for the table's answer
    page.wait_for_function("JSON.stringify(page.state.game.dice) === '[1,4,6,6,6]'")
    assert table.state()["game"]["dice"] == [1, 4, 6, 6, 6]


def test_undo_says_what_it_takes_back(table, open_page):
    table.post("/api/games", {"players": ["Ana", "Ben"]})
    page = open_page(table.url, viewport=PHONE)
    undo = page.locator("#undo-button")
    expect(undo).to_be_disabled()
    table.post("/api/roll", {"dice": [1, 2, 3, 4, 6]})
    expect(undo).to_have_attribute("aria-label", "Undo: Ana's roll 1")
    table.post("/api/roll", {"dice": [1, 2, 3, 4, 4]})
    expect(undo).to_have_attribute("aria-label", "Undo: Ana's roll 2")
    expect(undo).to_contain_text("Ana's roll 2")
    table.post("/api/correct", {"die": 4, "value": 5})
    expect(undo).to_have_attribute("aria-label", "Undo: Ana's correction")
    table.post("/api/record", {"category": "little_straight"})
    expect(undo).to_have_attribute("aria-label", "Undo: Ana's Little Straight")
    screenshot(page, "phone-undo-named")
    undo.tap()
    expect(page.locator("#turn-title")).to_have_text("Ana's turn")
    expect(undo).to_have_attribute("aria-label", "Undo: Ana's correction")


def test_language_and_theme_are_changed_during_a_game(table, open_page):
    table.post("/api/games", {"players": ["Ana", "Ben"]})
    table.post("/api/roll", {"dice": [2, 2, 3, 3, 5]})
    page = open_page(table.url, viewport=PHONE)
    expect(page.locator("html")).to_have_attribute("data-theme", "light")
    page.locator("#menu-button").tap()
    page.locator('#menu-languages [data-language="fr"]').tap()
    expect(page.locator('#sheet tr[data-row="choice"] th')).to_have_text("Chance")
    page.locator('#menu-themes [data-theme="dark"]').tap()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    screenshot(page, "phone-menu-dark-fr")
    assert page.evaluate(LOW_CONTRAST, 4.5) == []
    page.locator("#dialog-menu").get_by_role("button", name="Fermer").tap()
    expect(page.locator("#screen-game")).to_be_visible()  # still the game, mid-turn
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(14, 19, 16)"
    page.locator("#manual-roll").tap()  # the keypad in the dark
    assert page.evaluate(LOW_CONTRAST, 4.5) == []
    page.keyboard.press("Escape")

    page.reload()  # both are remembered on this tablet
    expect(page.locator('#sheet tr[data-row="choice"] th')).to_have_text("Chance")
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    page.locator("#menu-button").tap()
    page.locator('#menu-themes [data-theme="auto"]').tap()  # back to what the device says: light here
    expect(page.locator("html")).to_have_attribute("data-theme", "light")
    expect(page.locator('#menu-themes [data-theme="auto"]')).to_have_attribute("aria-pressed", "true")
    assert re.match(r"rgb\(238, 241, 236\)", page.evaluate("getComputedStyle(document.body).backgroundColor"))
