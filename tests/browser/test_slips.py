"""Small things the page said wrong: a Yacht that scores nothing celebrated, a camera picture beside
typed dice, "1 points", European Portuguese, a table out of reach shown as if it were there."""

from __future__ import annotations

import re

import pytest

from hardware.supervisor import CameraState

from .conftest import PHONE, screenshot

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need playwright").expect


def test_a_yacht_is_celebrated_only_while_it_can_be_scored(table, open_page):
    table.post("/api/games", {"players": ["Ana"]})
    page = open_page(table.url)
    expect(page.locator("#turn-title")).to_have_text("Ana's turn")
    banner = page.locator("#yacht-banner")
    table.post("/api/roll", {"dice": [4, 4, 4, 4, 4]})
    expect(banner).to_be_visible()
    table.post("/api/record", {"category": "yacht"})
    expect(banner).to_be_hidden(timeout=4000)
    table.post("/api/roll", {"dice": [5, 5, 5, 5, 5]})  # five alike, the Yacht row filled: no party
    expect(page.locator('#sheet button.option[data-category="fives"]')).to_have_text("25")
    assert banner.is_hidden()  # drawn with the same state as the sheet: no waiting for it to go


def test_no_camera_picture_beside_dice_typed_by_hand(table, open_page):
    import cv2
    import numpy as np

    from .test_tablet import camera_throw, long_press

    table.post("/api/games", {"players": ["Ana"]})
    picture = cv2.imencode(".jpg", np.full((240, 320, 3), 90, np.uint8))[1].tobytes()
    table.engine.still_jpeg = lambda: picture
    service = table.engine.table
    page = open_page(table.url)
    thumbnail = page.locator("#camera-thumb")
    service.camera_reading(camera_throw([4, 4, 2], status="unsure", problems=["three dice seen"]))
    expect(thumbnail).to_be_visible()  # the throw the camera's words are about
    page.locator("#manual-roll").tap()  # starts from the three dice read: two values, then Save
    for value in (1, 6):
        page.locator(f'#manual-keys [data-value="{value}"]').tap()
    page.locator("#manual-save").tap()
    expect(page.locator("#dice-source")).to_contain_text("Entered by hand")
    expect(thumbnail).to_be_hidden()
    expect(page.locator("#camera-message")).to_be_hidden()  # nor its words about that throw
    long_press(page.locator('#dice [data-die="4"]'))  # a typed roll corrected is still typed
    page.locator('#die-choices [data-value="5"]').tap()
    expect(page.locator("#dice-source")).to_contain_text("Corrected by hand")
    expect(thumbnail).to_be_hidden()
    # A new throw after the typed one is what the camera talks about: its picture shows again.
    service.camera_reading(camera_throw([3, 3], status="unsure", problems=["two dice seen"]))
    expect(thumbnail).to_be_visible()


@pytest.mark.parametrize(("language", "one", "few", "zero"), [
    ("en", "1 point", "4 points", "0 points"),
    ("fr", "1 point", "4 points", "0 point"),  # French counts 0 as singular
    ("pt", "1 ponto", "4 pontos", "0 pontos"),
    ("sr", "1 поен", "4 поена", "0 поена"),
    ("ht", "1 pwen", "4 pwen", "0 pwen"),
])
def test_points_follow_the_languages_plural_rules(table, open_page, language, one, few, zero):
    table.post("/api/games", {"players": ["Ana"]})
    table.post("/api/roll", {"dice": [1, 2, 2, 3, 6]})  # Ones 1, Twos 4, Yacht 0
    page = open_page(table.url)
    page.evaluate(f"setLanguage('{language}')")
    for category, words in (("ones", one), ("twos", few), ("yacht", zero)):
        option = page.locator(f'#sheet button.option[data-category="{category}"]')
        expect(option).to_have_attribute("aria-label", re.compile(f": {words}$"))
    page.locator('#sheet button.option[data-category="ones"]').tap()
    expect(page.locator("#confirm-text")).to_contain_text(one)
    # Serbian has three forms: 21 takes the singular, 22 the paucal.
    assert page.evaluate("[21, 22, 25].map((points) => t('points', { points }))") == {
        "en": ["21 points", "22 points", "25 points"],
        "fr": ["21 points", "22 points", "25 points"],
        "pt": ["21 pontos", "22 pontos", "25 pontos"],
        "sr": ["21 поен", "22 поена", "25 поена"],
        "ht": ["21 pwen", "22 pwen", "25 pwen"],
    }[language]


def test_portuguese_is_brazilian(table, open_page):
    table.post("/api/games", {"players": ["Ana"]})
    table.post("/api/roll", {"dice": [1, 2, 2, 3, 6]})
    page = open_page(table.url)
    page.evaluate("setLanguage('pt')")
    expect(page.locator("html")).to_have_attribute("lang", "pt-BR")
    expect(page.locator("#manual-roll")).to_have_text("Digitar lançamento")
    expect(page.locator("#camera-pill")).to_have_text("Sem câmera")
    screenshot(page, "tablet-game-pt-BR")


def test_a_table_out_of_reach_is_said_plainly_and_nothing_pretends_to_work(table, open_page):
    table.post("/api/games", {"players": ["Ana", "Ben"]})
    table.post("/api/roll", {"dice": [2, 2, 3, 3, 5]})
    table.engine.table.camera_changed(CameraState.LIVE)
    page = open_page(table.url, viewport=PHONE)
    option = page.locator('#sheet button.option[data-category="choice"]')
    expect(page.locator("#camera-pill")).to_have_text("Camera live")
    usable = "(node) => getComputedStyle(node).pointerEvents !== 'none'"
    assert option.evaluate(usable) and page.locator('#dice [data-die="0"]').evaluate(usable)

    table.stop()
    expect(page.locator("#connection")).to_have_text(re.compile("^The table cannot be reached"))
    expect(page.locator("#camera-pill")).to_have_text("Camera: not known")  # not the last status it heard
    for control in (option, page.locator('#dice [data-die="0"]'), page.locator("#manual-roll"),
                    page.locator("#undo-button")):
        assert not control.evaluate(usable)
    screenshot(page, "phone-table-unreachable")

    table.start()
    expect(page.locator("#camera-pill")).to_have_text("No camera", timeout=10000)  # the table came back without its camera
    expect(page.locator("#connection")).to_have_text("Connected again.")
    assert option.evaluate(usable)
    option.tap()
    page.locator("#confirm-record").tap()
    expect(page.locator("#turn-title")).to_have_text("Ben's turn")
