"""The tablet page in a real browser against the real table service, driven by taps only."""

from __future__ import annotations

import re

import pytest

from hardware.supervisor import CameraState
from webui.i18n import LANGUAGES, load_catalog

from .conftest import PHONE, TABLET, screenshot

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need playwright").expect

# One turn per row for each player: (dice, category, points). Ana plays well, Ben scratches a lot.
ANA_TURNS = [
    ([6, 6, 6, 6, 6], "yacht", 50),
    ([2, 3, 4, 5, 6], "big_straight", 30),
    ([1, 2, 3, 4, 5], "little_straight", 30),
    ([6, 6, 6, 6, 5], "four_of_a_kind", 29),
    ([6, 6, 6, 5, 5], "full_house", 28),
    ([6, 6, 5, 6, 6], "choice", 29),
    ([6, 6, 6, 6, 1], "sixes", 24),
    ([5, 5, 5, 5, 1], "fives", 20),
    ([4, 4, 4, 4, 1], "fours", 16),
    ([3, 3, 3, 3, 1], "threes", 12),
    ([2, 2, 2, 2, 1], "twos", 8),
    ([1, 1, 1, 1, 2], "ones", 4),
]
BEN_DICE = [2, 2, 3, 3, 5]
BEN_POINTS = {"yacht": 0, "big_straight": 0, "little_straight": 0, "four_of_a_kind": 0, "full_house": 0,
              "choice": 15, "sixes": 0, "fives": 5, "fours": 0, "threes": 6, "twos": 4, "ones": 0}


def enter_roll_by_taps(page, dice):
    """Six taps: the keypad, then each die's value; the fifth saves the roll."""
    page.locator("#manual-roll").tap()
    for value in dice:
        page.locator(f'#manual-keys [data-value="{value}"]').tap()


def roll_by_taps(page, dice, roll_number):
    enter_roll_by_taps(page, dice)
    expect(page.locator("#roll-line")).to_contain_text(f"Roll {roll_number} of 3")
    expect(page.locator('#dice [data-die="4"]')).to_have_attribute("aria-label", re.compile(f"^Die 5: {dice[4]}"))


def record_by_taps(page, category, points, column):
    page.locator(f'#sheet button.option[data-category="{category}"]').tap()
    expect(page.locator("#confirm-text")).to_contain_text(f"{points} points")
    page.locator("#confirm-record").tap()
    # Taken, not just offered (an offered row may show the same points): then drawn.
    page.wait_for_function(f"page.state.game.sheets[{column}]['{category}'] === {points}")
    if page.locator("#screen-game").is_visible():
        expect(sheet_cell(page, category, column)).to_have_text(str(points))


def go_to(page, where):
    """'new-game' or 'history': a button in the top bar on a tablet, in the menu on a phone."""
    button = page.locator(f"#{where}-button")
    if button.is_visible():
        button.tap()
    else:
        page.locator("#menu-button").tap()
        page.locator(f"#menu-{where}").tap()


def sheet_cell(page, category, column):
    return page.locator(f'#sheet tr[data-row="{category}"] td').nth(column)


def test_a_two_player_game_played_by_taps_to_the_end(table, open_page):
    page = open_page(table.url)
    expect(page.locator("#screen-start")).to_be_visible()
    screenshot(page, "tablet-start")
    page.locator('#player-list input[data-player="0"]').fill("Ana")
    page.locator('#player-list input[data-player="1"]').fill("Ben")
    page.locator("#start-game").tap()
    expect(page.locator("#turn-title")).to_have_text("Ana's turn")
    expect(page.locator("#roll-line")).to_have_text("Roll the dice")

    ben_categories = list(BEN_POINTS)
    for turn, (dice, category, points) in enumerate(ANA_TURNS):
        if turn == 1:
            # A turn of three rolls: the advisor names dice to keep while rolls remain.
            roll_by_taps(page, [2, 3, 4, 1, 1], 1)
            expect(page.locator("#advice-body")).to_contain_text("Keep these dice")
            roll_by_taps(page, [2, 3, 4, 5, 1], 2)
            screenshot(page, "tablet-game-roll2")
            roll_by_taps(page, dice, 3)
            expect(page.locator("#roll-line")).to_contain_text("Choose a row")
            expect(page.locator("#manual-roll")).to_be_disabled()
        else:
            roll_by_taps(page, dice, 1)
        if category == "yacht":
            expect(page.locator("#yacht-banner")).to_be_visible()
            screenshot(page, "tablet-yacht")
            expect(page.locator('#sheet button.option.best[data-category="yacht"]')).to_be_visible()
        record_by_taps(page, category, points, 0)
        expect(page.locator("#turn-title")).to_have_text("Ben's turn")

        roll_by_taps(page, BEN_DICE, 1)
        if turn == 0:
            page.locator('#sheet button.option[data-category="choice"]').tap()
            screenshot(page, "tablet-confirm")
            page.get_by_role("button", name="Cancel").tap()
        ben_category = ben_categories[turn]
        record_by_taps(page, ben_category, BEN_POINTS[ben_category], 1)

    expect(page.locator("#screen-over")).to_be_visible()
    expect(page.locator("#winner-line")).to_have_text("Ana wins!")
    cards = page.locator("#over-players .summary")
    expect(cards.nth(0).locator(".summary-total")).to_have_text("280")
    expect(cards.nth(1).locator(".summary-total")).to_have_text(str(sum(BEN_POINTS.values())))
    expect(cards.nth(0).locator(".summary-sheet tr")).to_have_count(12)
    # Ben's scratched Yacht cost him expected points against the advisor, so his card names turns.
    expect(cards.nth(1).locator(".costly li").first).to_contain_text("points below the advisor's choice")
    screenshot(page, "tablet-game-over")

    page.locator("#history-button").tap()
    expect(page.locator("#history-list .game-item")).to_have_count(1)
    expect(page.locator("#history-list .game-item")).to_contain_text("Ana 280")
    screenshot(page, "tablet-history")
    page.locator("#history-list").get_by_role("button", name="View").tap()
    expect(page.locator("#history-detail-title")).to_have_text("Ana wins!")
    page.locator("#history-back").tap()
    page.locator("#history-back").tap()

    page.locator("#same-players").tap()
    expect(page.locator("#turn-title")).to_have_text("Ana's turn")
    expect(page.locator("#standings")).to_have_text(re.compile(r"Ana\s*0\s*Ben\s*0"))


def test_a_die_corrected_and_actions_undone(table, open_page):
    table.post("/api/games", {"players": ["Ana", "Ben"]})
    page = open_page(table.url)
    roll_by_taps(page, [1, 2, 3, 4, 6], 1)
    expect(page.locator('#sheet button.option[data-category="little_straight"]')).to_have_text("0")

    long_press(page.locator('#dice [data-die="4"]'))
    expect(page.locator("#die-title")).to_have_text("Die 5: which value?")
    page.locator('#die-choices [data-value="5"]').tap()
    expect(page.locator('#dice [data-die="4"]')).to_have_attribute("aria-label", re.compile("^Die 5: 5"))
    expect(page.locator("#dice-source")).to_contain_text("Corrected by hand")
    expect(page.locator("#roll-line")).to_have_text("Roll 1 of 3")  # a correction is not a roll
    record_by_taps(page, "little_straight", 30, 0)
    expect(page.locator("#turn-title")).to_have_text("Ben's turn")

    page.locator("#undo-button").tap()
    expect(page.locator("#turn-title")).to_have_text("Ana's turn")
    expect(sheet_cell(page, "little_straight", 0).locator("button.option.best")).to_have_text("30")
    page.locator("#undo-button").tap()
    expect(page.locator('#dice [data-die="4"]')).to_have_attribute("aria-label", re.compile("^Die 5: 6"))
    page.locator("#undo-button").tap()
    expect(page.locator("#roll-line")).to_have_text("Roll the dice")
    expect(page.locator("#undo-button")).to_be_disabled()


def test_two_tablets_stay_in_sync_within_a_second(table, open_page):
    table.post("/api/games", {"players": ["Ana", "Ben", "Cy"]})
    first = open_page(table.url)
    second = open_page(table.url, viewport=PHONE)
    expect(second.locator("#turn-title")).to_have_text("Ana's turn")

    roll_by_taps(first, [5, 5, 5, 2, 2], 1)
    expect(second.locator('#dice [data-die="0"]')).to_have_attribute(
        "aria-label", re.compile("^Die 1: 5"), timeout=1000)
    first.locator('#sheet button.option[data-category="choice"]').tap()
    second.locator('#sheet button.option[data-category="full_house"]').tap()
    screenshot(second, "phone-confirm")
    second.locator("#confirm-record").tap()
    expect(sheet_cell(first, "full_house", 0)).to_have_text("19", timeout=1000)
    expect(first.locator("#dialog-confirm")).to_be_hidden()  # its question was answered elsewhere
    expect(first.locator("#turn-title")).to_have_text("Ben's turn", timeout=1000)
    roll_by_taps(second, [6, 6, 6, 6, 2], 1)
    expect(first.locator("#roll-line")).to_have_text("Roll 1 of 3", timeout=1000)
    screenshot(second, "phone-game")


def test_a_stale_page_is_refreshed_and_told(table, open_page):
    table.post("/api/games", {"players": ["Ana"]})
    page = open_page(table.url)
    expect(page.locator("#turn-title")).to_have_text("Ana's turn")
    # This tablet stops hearing about changes, and its periodic state check is held back until
    # its own write has gone out, so that write is certain to carry an old version.
    write_sent = []

    def state_check(route):
        if write_sent:
            route.continue_()
        else:
            route.abort()

    def own_write(route):
        write_sent.append(True)
        route.continue_()

    page.route("**/api/events", lambda route: route.abort())
    page.route("**/api/state", state_check)
    page.route("**/api/roll", own_write)
    page.evaluate("page.events.close()")
    table.post("/api/roll", {"dice": [4, 4, 4, 1, 2]})

    enter_roll_by_taps(page, [3, 3, 3, 3, 3])
    expect(page.locator("#toast")).to_have_text(
        "Not done, the game moved on: it is roll 1 now; the dice are now 4 4 4 1 2. Check, then tap again.")
    expect(page.locator('#dice [data-die="0"]')).to_have_attribute("aria-label", re.compile("^Die 1: 4"))
    assert table.state()["game"]["dice"] == [4, 4, 4, 1, 2]


def test_a_lost_connection_is_shown_and_recovered_without_reload(table, open_page):
    table.post("/api/games", {"players": ["Ana", "Ben"]})
    page = open_page(table.url)
    expect(page.locator("#turn-title")).to_have_text("Ana's turn")
    page.evaluate("window.loadedOnce = true")

    table.stop()
    expect(page.locator("#connection")).to_have_text(re.compile("^The table cannot be reached"))
    table.start()  # same port, same data: the table came back
    table.post("/api/roll", {"dice": [6, 5, 4, 3, 2]})
    expect(page.locator('#dice [data-die="0"]')).to_have_attribute(
        "aria-label", re.compile("^Die 1: 6"), timeout=10000)
    expect(page.locator("#connection")).to_have_text("Connected again.")

    table.stop()
    table.data_dir = table.data_dir.with_name("fresh")  # a table whose data was wiped counts anew
    table.start()
    expect(page.locator("#screen-start")).to_be_visible(timeout=10000)
    assert page.evaluate("window.loadedOnce") is True  # no reload happened


def test_every_language_renders_its_category_names(table, open_page):
    table.post("/api/games", {"players": ["Ana", "Ben"]})
    table.post("/api/roll", {"dice": [3, 3, 3, 6, 6]})
    page = open_page(table.url)
    categories = table.state()["categories"]
    for language in LANGUAGES:
        catalog = load_catalog(language)
        page.locator("#new-game-button").tap()
        page.locator(f'#language-list [data-language="{language}"]').tap()
        expect(page.locator("#screen-start h2")).to_have_text(catalog["start_title"])
        page.locator("#back-to-game").tap()
        names = [catalog[f"cat.{category}"] for category in categories]
        expect(page.locator("#sheet tbody th.row-name")).to_have_text(names)
        expect(page.locator("#sheet tfoot th")).to_have_text(catalog["total"])
        expect(page.locator("html")).to_have_attribute("lang", {"sr": "sr-Cyrl", "pt": "pt-BR"}.get(language, language))
        screenshot(page, f"tablet-game-{language}")

    page.reload()  # the last language chosen is remembered on this tablet
    expect(page.locator("#sheet tbody th.row-name")).to_have_text(
        [load_catalog(LANGUAGES[-1])[f"cat.{category}"] for category in categories])


def test_a_table_pin_is_asked_once_and_kept(tmp_path, advisor, open_page):
    from .conftest import LiveTable

    with LiveTable(data_dir=tmp_path / "data", advisor=advisor, pin="2468") as table:
        table.post("/api/games", {"players": ["Ana"]})
        page = open_page(table.url)
        enter_roll_by_taps(page, [1, 2, 3, 4, 5])
        page.locator("#pin-input").fill("1111")
        page.locator("#pin-form").get_by_role("button", name="OK").tap()
        expect(page.locator("#pin-text")).to_have_text("Wrong PIN. Try again.")
        page.locator("#pin-input").fill("2468")
        page.locator("#pin-form").get_by_role("button", name="OK").tap()
        expect(page.locator("#roll-line")).to_have_text("Roll 1 of 3")
        page.locator('#sheet button.option[data-category="little_straight"]').tap()
        page.locator("#confirm-record").tap()
        expect(sheet_cell(page, "little_straight", 0)).to_have_text("30")
        expect(page.locator("#dialog-pin")).not_to_be_visible()


def test_too_many_wrong_pins_say_how_long_to_wait(tmp_path, advisor, open_page):
    from .conftest import LiveTable

    with LiveTable(data_dir=tmp_path / "data", advisor=advisor, pin="2468") as table:
        table.post("/api/games", {"players": ["Ana"]})
        page = open_page(table.url)
        enter_roll_by_taps(page, [1, 2, 3, 4, 5])
        toast = page.locator("#toast")
        for _ in range(10):  # the table locks after a few wrong PINs
            page.wait_for_function("$('dialog-pin').open || !$('toast').hidden")
            if toast.is_visible():
                break
            page.locator("#pin-input").fill("1111")
            page.locator("#pin-form").get_by_role("button", name="OK").tap()
            page.wait_for_timeout(200)  # the answer closes or reopens the dialog
        expect(toast).to_have_text("Too many wrong PINs. Try again in 30 seconds.")  # the table's Retry-After
        screenshot(page, "tablet-pin-locked")


def test_screens_in_the_dark_and_on_a_phone(table, open_page):
    table.post("/api/games", {"players": ["Ana", "Ben", "Cy", "Dee"]})
    for dice, category in [([6, 6, 6, 6, 6], "yacht"), ([2, 2, 3, 3, 5], "choice"), ([1, 2, 3, 4, 5], "little_straight")]:
        table.post("/api/roll", {"dice": dice})
        table.post("/api/record", {"category": category})
    table.post("/api/roll", {"dice": [4, 4, 1, 2, 6]})
    dark = open_page(table.url, color_scheme="dark")
    expect(dark.locator("#turn-title")).to_have_text("Dee's turn")
    screenshot(dark, "tablet-game-dark")
    dark.locator("#manual-roll").tap()
    screenshot(dark, "tablet-manual-dark")

    phone = open_page(table.url, viewport=PHONE)
    expect(phone.locator("#turn-title")).to_have_text("Dee's turn")
    phone.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    # Scrolled down to the sheet's last rows, the players' totals still show under the top bar.
    bar_bottom = phone.evaluate("document.querySelector('.topbar').getBoundingClientRect().bottom")
    assert phone.evaluate("document.getElementById('standings').getBoundingClientRect().top") == pytest.approx(bar_bottom, abs=2)
    phone.evaluate("window.scrollTo(0, 0)")
    go_to(phone, "new-game")
    expect(phone.locator("#player-list input")).to_have_count(4)
    screenshot(phone, "phone-start")
    phone.locator("#back-to-game").tap()
    long_press(phone.locator('#dice [data-die="2"]'))
    screenshot(phone, "phone-correct")


def test_the_camera_status_is_always_shown(table, open_page):
    table.post("/api/games", {"players": ["Ana"]})
    page = open_page(table.url)
    pill = page.locator("#camera-pill")
    expect(pill).to_have_text("No camera")
    expect(page.locator("#camera-message")).to_have_text("Enter the rolls by hand.")
    expect(page.locator("#camera-button")).to_be_hidden()  # nothing behind it: entering takes the row
    expect(page.locator("#throw-button")).to_be_hidden()  # only the demo camera throws when asked
    screenshot(page, "tablet-no-camera")

    camera = table.engine.table
    camera.camera_changed(CameraState.LIVE)
    expect(pill).to_have_text("Camera live")
    expect(page.locator("#camera-message")).to_be_hidden()
    expect(page.locator("#camera-button")).to_be_visible()
    camera.camera_changed(CameraState.READING)
    expect(pill).to_have_text("Reading the dice…")
    camera.camera_changed(CameraState.UNSURE, "two dice lean on each other")
    expect(pill).to_have_text("Camera unsure")
    expect(page.locator("#camera-message")).to_have_text(
        "two dice lean on each other · Throw again, or enter the roll by hand.")
    screenshot(page, "tablet-camera-unsure")
    camera.camera_changed(CameraState.OFFLINE, "no frame for 2 s")
    expect(pill).to_have_text("Camera offline")
    expect(page.locator("#camera-message")).to_contain_text("no frame for 2 s")

    pill.tap()  # the picture is one tap away; before any throw was read there is none
    expect(page.locator("#dialog-camera #camera-none")).to_have_text("No camera picture yet.")
    page.locator("#camera-show-live").tap()
    expect(page.locator("#camera-show-live")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#camera-still")).to_have_attribute("src", "/api/camera.mjpg")
    page.locator("#dialog-camera").get_by_role("button", name="Close").tap()
    expect(page.locator("#camera-still")).not_to_have_attribute("src", re.compile("."))
    roll_by_taps(page, [1, 1, 2, 2, 2], 1)  # manual rolls still work with the camera offline


def camera_throw(values, confidence=0.99, status="ok", problems=(), y=200.0):
    """Dice in a row at height `y`: a throw after another lies elsewhere (dice lying where they lay
    are the kept ones)."""
    from vision.reading import Die, Reading

    dice = tuple(Die(value=v, x=60.0 + 90 * i, y=y, size=50.0, angle=0.0,
                     confidence=confidence if i == 0 else 0.99) for i, v in enumerate(values))
    return Reading(dice=dice, status=status, problems=tuple(problems))


def long_press(locator):
    """Held down past the page's long press: a die is corrected rather than held."""
    locator.click(delay=700)


def test_camera_throws_become_rolls_and_a_fourth_is_not_counted(table, open_page):
    table.post("/api/games", {"players": ["Ana", "Ben"]})
    page = open_page(table.url)
    service = table.engine.table

    service.camera_reading(camera_throw([4, 4, 2, 6, 1], confidence=0.5))
    expect(page.locator("#roll-line")).to_have_text("Roll 1 of 3")
    expect(page.locator("#dice-source")).to_contain_text("Read by the camera")
    expect(page.locator('#dice [data-die="0"]')).to_have_class(re.compile(r"\bdoubtful\b"))
    expect(page.locator('#dice [data-die="1"]')).not_to_have_class(re.compile(r"\bdoubtful\b"))

    service.camera_reading(camera_throw([4, 4], status="unsure", problems=["only two dice seen"]))
    expect(page.locator("#camera-message")).to_contain_text("only two dice seen")
    expect(page.locator("#roll-line")).to_have_text("Roll 1 of 3")

    service.camera_reading(camera_throw([4, 4, 4, 6, 1], y=300.0))
    service.camera_reading(camera_throw([4, 4, 4, 4, 1], y=400.0))
    expect(page.locator("#roll-line")).to_have_text("Roll 3 of 3 · Choose a row")
    service.camera_reading(camera_throw([4, 4, 4, 4, 4]))
    expect(page.locator("#camera-message")).to_have_text(
        "That throw was not counted: all three rolls are used. Choose a row.")
    expect(page.locator('#dice [data-die="4"]')).to_have_attribute("aria-label", re.compile("^Die 5: 1"))
    page.locator('#sheet button.option[data-category="four_of_a_kind"]').click()  # a mouse works too
    page.locator("#confirm-record").click()
    expect(sheet_cell(page, "four_of_a_kind", 0)).to_have_text("17")


def test_a_throw_under_the_camera_reaches_the_tablet_with_its_picture(tmp_path, advisor, open_page):
    """The whole way on a real page: a generated throw's frames replayed as a camera gives them, the
    dice settling, read by the real reader, the roll on the tablet beside the picture it was read from."""
    import json
    from pathlib import Path

    from hardware.camera import ReplayCamera

    from .conftest import LiveTable

    throw = Path(__file__).resolve().parents[2] / "samples" / "sequences" / "single_throw"
    at_rest = json.loads((throw / "sequence.json").read_text())["values_at_rest"][0]
    with LiveTable(data_dir=tmp_path / "data", advisor=advisor, camera=lambda: ReplayCamera(throw)) as live:
        live.post("/api/games", {"players": ["Ana"]})
        page = open_page(live.url)
        expect(page.locator("#roll-line")).to_have_text("Roll the dice")
        live.engine.start()
        expect(page.locator("#roll-line")).to_have_text("Roll 1 of 3", timeout=20000)
        shown = [int(label.split(": ")[1][0]) for label in
                 page.locator("#dice .die").evaluate_all("dice => dice.map(die => die.getAttribute('aria-label'))")]
        assert sorted(shown) == sorted(at_rest)
        expect(page.locator("#dice-source")).to_contain_text("Read by the camera")
        thumbnail = page.locator("#camera-thumb")
        expect(thumbnail).to_be_visible()
        assert thumbnail.evaluate("image => image.naturalWidth") == 640  # the frame, as the camera gave it
        screenshot(page, "tablet-camera-throw")
        page.locator("#camera-button").tap()
        expect(page.locator("#camera-still")).to_be_visible()
        screenshot(page, "tablet-camera-throw-large")


def test_a_throw_the_camera_could_not_read_is_entered_from_what_it_did_read(table, open_page):
    from vision.reading import Die, Problem, Reading

    table.post("/api/games", {"players": ["Ana"]})
    table.post("/api/roll", {"dice": [1, 1, 1, 1, 1]})
    service = table.engine.table
    page = open_page(table.url)
    # Five dice, left to right 3, 6, ?, 2, 6 (listed out of order): the middle one could not be read.
    places = {150: 6, 250: None, 350: 2, 450: 6, 50: 3}
    dice = tuple(Die(value=v, x=float(x), y=200.0, size=50.0, angle=0.0, confidence=0.0 if v is None else 0.95)
                 for x, v in places.items())
    service.camera_reading(Reading(dice, "unsure", (Problem("the die at (250, 200) could not be read",
                                                            "unreadable"),)))
    expect(page.locator("#camera-message")).to_have_text(
        "A die could not be read · Throw again, or enter the roll by hand.")
    expect(page.locator("#roll-line")).to_have_text("Roll 1 of 3")  # not counted

    page.locator("#manual-roll").tap()
    slots = page.locator("#manual-slots .manual-slot")
    expect(slots).to_have_count(5)
    screenshot(page, "tablet-enter-unsure-throw")
    assert [slot.get_attribute("data-value") for slot in slots.all()] == ["3", "6", "", "2", "6"]
    page.locator('#manual-keys [data-value="5"]').tap()  # fills the place left empty
    expect(page.locator("#dialog-manual")).to_be_visible()  # what the camera read is checked, then saved
    page.locator("#manual-save").tap()
    expect(page.locator("#roll-line")).to_have_text("Roll 2 of 3")
    assert table.state()["game"]["dice"] == [3, 6, 5, 2, 6]

    table.post("/api/roll", {"dice": [2, 2, 2, 2, 2]})
    service.camera_reading(Reading(dice, "unsure", (Problem("the die at (250, 200) could not be read",
                                                            "unreadable"),)))
    # All three rolls are used: no throw counts now, whatever the camera made of it.
    expect(page.locator("#camera-message")).to_have_text(
        "That throw was not counted: all three rolls are used. Choose a row.")


def test_the_camera_says_why_in_the_players_language_and_its_picture_follows_each_throw(table, open_page):
    import cv2
    import numpy as np

    from vision.reading import Problem

    table.post("/api/games", {"players": ["Ana"]})
    pictures = {width: cv2.imencode(".jpg", np.full((width * 3 // 4, width, 3), 90, np.uint8))[1].tobytes()
                for width in (320, 640)}
    shown = {"picture": pictures[320]}
    table.engine.still_jpeg = lambda: shown["picture"]  # the table loop's last picture
    service = table.engine.table
    page = open_page(table.url)
    page.locator("#new-game-button").tap()
    page.locator('#language-list [data-language="fr"]').tap()
    page.locator("#back-to-game").tap()
    french = load_catalog("fr")

    hand = Problem("something that is no die is in the tray near (90, 80) (a hand?)", "foreign")
    unread = Problem("the die at (150, 200) could not be read", "unreadable")
    thumbnail = page.locator("#camera-thumb")
    expect(thumbnail).to_be_hidden()  # no throw read yet
    service.camera_reading(camera_throw([4, 4], status="unsure", problems=[hand, unread]))
    said = f"{french['note.foreign']} · {french['note.unreadable']}"
    expect(page.locator("#camera-message")).to_have_text(f"{said} · {french['cam_unsure_help']}")
    # The throw as the camera read it is on the game screen, beside the dice; a tap shows it large.
    expect(thumbnail).to_be_visible()
    assert thumbnail.evaluate("image => image.naturalWidth") == 320
    screenshot(page, "tablet-camera-thumbnail")
    page.locator("#camera-button").tap()
    expect(page.locator("#camera-detail")).to_have_text(said)
    still = page.locator("#camera-still")
    expect(still).to_be_visible()
    assert still.evaluate("image => image.naturalWidth") == 320

    shown["picture"] = pictures[640]  # a throw read while the last one's picture is shown
    service.camera_reading(camera_throw([4, 4, 4]))  # three dice cannot open a turn
    expect(page.locator("#camera-detail")).to_have_text(french["note.first_throw_five"].replace("{count}", "3"))
    page.wait_for_function("document.getElementById('camera-still').naturalWidth === 640")
    page.wait_for_function("document.getElementById('camera-thumb').naturalWidth === 640")
    screenshot(page, "tablet-camera-french")
    page.locator("#dialog-camera").get_by_role("button", name=french["close"]).tap()

    service.camera_moving()  # the dice are picked up: that throw is no longer what the screen is about
    expect(thumbnail).to_be_hidden()
    service.camera_reading(camera_throw([2, 3, 4, 5, 6]))  # the next throw, counted
    expect(page.locator('#dice [data-die="4"]')).to_have_attribute("aria-label", re.compile("6$"))
    expect(thumbnail).to_be_visible()
    # a throw not counted, shown while it is talked of
    service.camera_reading(camera_throw([2, 3, 4, 5], status="unsure", problems=[unread], y=320.0))
    expect(page.locator("#camera-message")).to_contain_text(french["note.unreadable"])
    expect(thumbnail).to_be_visible()
    service.camera_moving()  # then the dice move again: beside the roll's dice, no picture of another throw
    expect(page.locator("#camera-pill")).to_have_text(french["cam.live"])
    expect(thumbnail).to_be_hidden()


def test_an_unfinished_game_is_resumed_from_the_start_screen(table, open_page):
    table.post("/api/games", {"players": ["Ana", "Ben"]})
    table.post("/api/roll", {"dice": [2, 2, 2, 5, 5]})
    table.post("/api/record", {"category": "full_house"})
    table.post("/api/games", {"players": ["Cy"]})
    page = open_page(table.url)
    expect(page.locator("#turn-title")).to_have_text("Cy's turn")
    page.locator("#new-game-button").tap()
    unfinished = page.locator("#unfinished-list .game-item")
    expect(unfinished).to_have_count(1)
    expect(unfinished).to_contain_text("Ana 16 · Ben 0")
    screenshot(page, "tablet-start-unfinished")
    unfinished.get_by_role("button", name="Resume").tap()
    expect(page.locator("#turn-title")).to_have_text("Ben's turn")
    expect(sheet_cell(page, "full_house", 0)).to_have_text("16")


TOO_SMALL_TO_TAP = """() => [...document.querySelectorAll('button, input, [role="button"]')]
    .filter((node) => node.offsetParent !== null || node.closest('dialog[open]'))
    .map((node) => [node.id || node.className || node.textContent, node.getBoundingClientRect()])
    .filter(([, box]) => box.width > 0 && (box.width < 48 || box.height < 48))
    .map(([name, box]) => `${name}: ${Math.round(box.width)}x${Math.round(box.height)}`)"""


@pytest.mark.parametrize("viewport", [TABLET, PHONE], ids=["tablet", "phone"])
def test_every_control_is_big_enough_for_a_finger(table, open_page, viewport):
    table.post("/api/games", {"players": ["Ana", "Ben", "Cy", "Dee", "Eve", "Flo", "Gus", "Hal"]})
    table.post("/api/roll", {"dice": [3, 3, 4, 5, 6]})
    page = open_page(table.url, viewport=viewport)
    expect(page.locator("#turn-title")).to_have_text("Ana's turn")
    assert page.evaluate(TOO_SMALL_TO_TAP) == []
    page.locator("#manual-roll").tap()
    assert page.evaluate(TOO_SMALL_TO_TAP) == []
    page.get_by_role("button", name="Cancel").last.tap()
    page.locator('#dice [data-die="0"]').tap()
    assert page.evaluate(TOO_SMALL_TO_TAP) == []
    page.keyboard.press("Escape")
    screenshot(page, f"game-8-players-{viewport['width']}")
    page.locator("#menu-button").tap()
    assert page.evaluate(TOO_SMALL_TO_TAP) == []
    page.keyboard.press("Escape")
    go_to(page, "new-game")
    assert page.evaluate(TOO_SMALL_TO_TAP) == []


# WCAG contrast of every visible piece of text against the backgrounds composited behind it.
LOW_CONTRAST = """(minimum) => {
  const rgba = (text) => { const v = text.match(/[\\d.]+/g).map(Number); return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; };
  const over = (top, below) => [0, 1, 2].map((i) => top[i] * top[3] + below[i] * (1 - top[3]));
  const luminance = (rgb) => {
    const [r, g, b] = rgb.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const backdrop = (node) => {
    const layers = [];
    for (let at = node; at; at = at.parentElement) layers.push(rgba(getComputedStyle(at).backgroundColor));
    return layers.reverse().reduce((below, layer) => over(layer, below), [255, 255, 255]);
  };
  const found = [];
  for (const node of document.querySelectorAll("body *")) {
    const own = [...node.childNodes].some((child) => child.nodeType === 3 && child.textContent.trim());
    if (!own || node.disabled || node.closest("[disabled]") || !node.getClientRects().length) continue;
    if (node.closest("[hidden], dialog:not([open])")) continue;
    const back = backdrop(node);
    const fore = over(rgba(getComputedStyle(node).color), back);
    const [light, dark] = [luminance(fore), luminance(back)].sort((a, b) => b - a);
    const ratio = (light + 0.05) / (dark + 0.05);
    if (ratio < minimum) found.push(`${node.tagName}.${node.className} "${node.textContent.trim().slice(0, 30)}": ${ratio.toFixed(2)}`);
  }
  return found;
}"""


@pytest.mark.parametrize("color_scheme", ["light", "dark"])
def test_text_has_readable_contrast(table, open_page, color_scheme):
    table.post("/api/games", {"players": ["Ana", "Ben"]})
    table.post("/api/roll", {"dice": [6, 6, 2, 3, 6]})
    page = open_page(table.url, color_scheme=color_scheme)
    expect(page.locator("#advice-body")).to_contain_text("Keep these dice")
    assert page.evaluate(LOW_CONTRAST, 4.5) == []
    page.locator("#new-game-button").tap()
    assert page.evaluate(LOW_CONTRAST, 4.5) == []


def test_the_end_screen_and_history_on_a_phone_in_the_dark(table, open_page):
    table.post("/api/games", {"players": ["Ana", "Ben"]})
    for dice, category, _ in ANA_TURNS:
        for player_dice in (dice, list(reversed(dice))):
            table.post("/api/roll", {"dice": player_dice})
            table.post("/api/record", {"category": category})
    phone = open_page(table.url, viewport=PHONE, color_scheme="dark")
    expect(phone.locator("#winner-line")).to_have_text("Ana and Ben share the win!")
    expect(phone.locator("#over-players .summary.winner")).to_have_count(2)
    screenshot(phone, "phone-game-over-dark")
    go_to(phone, "history")
    expect(phone.locator("#history-list .game-item")).to_have_count(1)
    screenshot(phone, "phone-history-dark")
