"""Kept dice on the page: hold between throws, throw only the others, and the camera's one-tap
question when it cannot tell which dice were kept; a whole game played so, taps counted."""

from __future__ import annotations

import random
import re

import pytest

from .conftest import PHONE, TABLET, record_measurement, screenshot

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need playwright").expect

DIE_SIZE = 50.0
# Dice lie on the cells of a grid over two die sizes apart: a die thrown to another cell is never
# taken for one that stayed.
CELLS = [(60.0 + 120 * column, 60.0 + 120 * row) for row in range(4) for column in range(8)]


def seen(dice):
    """A surely read throw of dice given as (value, (x, y)), in any order."""
    from vision.reading import Die, Reading

    return Reading(tuple(Die(value=v, x=x, y=y, size=DIE_SIZE, angle=0.0, confidence=0.97)
                         for v, (x, y) in dice), "ok")


def in_a_row(values, row):
    return [(v, CELLS[row * 8 + i]) for i, v in enumerate(values)]


def held_positions(page):
    return [int(d) for d in page.locator('#dice .die[aria-pressed="true"]').evaluate_all(
        "dice => dice.map(die => die.dataset.die)")]


def wait_for_holds_sent(page, count: int) -> None:
    """Until the table has answered the page's holds: the page shows a tapped die held at once and
    sends the hold after, so the table's state lags behind what the page shows."""
    page.wait_for_function(f"page.state.game.held.length === {count} && !page.holding")


def shown_dice(page):
    labels = page.locator("#dice .die").evaluate_all("dice => dice.map(die => die.getAttribute('aria-label'))")
    return [int(re.match(r"Die \d: (\d)", label).group(1)) for label in labels]


def test_hold_three_throw_two_and_the_roll_has_the_held_three(table, open_page):
    table.post("/api/games", {"players": ["Ana", "Ben"]})
    camera = table.engine.table
    page = open_page(table.url)
    camera.camera_reading(seen(in_a_row([2, 5, 2, 6, 2], 0)))
    expect(page.locator("#roll-line")).to_have_text("Roll 1 of 3")
    for die in (0, 2, 4):
        page.locator(f'#dice [data-die="{die}"]').tap()
    expect(page.locator("#dice .die.held")).to_have_count(3)
    expect(page.locator('#dice [data-die="2"]')).to_have_attribute("aria-label", "Die 3: 2 · Held")
    wait_for_holds_sent(page, 3)
    assert table.state()["game"]["held"] == [0, 2, 4]  # shared: every tablet shows them
    expect(page.locator("#dice-source")).to_contain_text("Tap a die to hold it")
    screenshot(page, "tablet-holds")

    camera.camera_reading(seen(in_a_row([6, 2], 2)))  # the held three set aside, two thrown
    expect(page.locator("#roll-line")).to_have_text("Roll 2 of 3")
    expect(page.locator('#dice [data-die="3"]')).to_have_attribute("aria-label", re.compile("^Die 4: 2"))
    assert shown_dice(page) == [2, 6, 2, 2, 2]
    assert held_positions(page) == []  # holds are for one throw: the next is the player's to say
    roll = table.state()["game"]
    assert roll["dice"] == [2, 6, 2, 2, 2] and roll["dice_source"] == "camera"
    assert roll["dice_confidence"] == [None, 0.97, None, 0.97, None]
    assert roll["history"] == [] and table.engine.table.session.game.actions[-1].held == (0, 2, 4)

    page.locator('#dice [data-die="1"]').tap()
    phone = open_page(table.url, viewport=PHONE)
    expect(phone.locator("#dice .die.held")).to_have_count(1)
    screenshot(phone, "phone-holds")


def test_the_advisors_keep_is_one_tap_and_a_tap_lets_a_die_go(table, open_page):
    table.post("/api/games", {"players": ["Ana"]})
    table.post("/api/roll", {"dice": [3, 3, 1, 3, 6]})
    page = open_page(table.url)
    keep = page.locator("#keep-these")
    expect(keep).to_be_visible()
    keep.tap()
    advised = table.state()["game"]["advice"]["best_keep_positions"]
    expect(page.locator("#dice .die.held")).to_have_count(len(advised))
    wait_for_holds_sent(page, len(advised))
    assert table.state()["game"]["held"] == sorted(advised) and [3, 3, 3] == [3, 3, 1, 3, 6][:2] + [3]
    expect(keep).to_be_hidden()  # what it would hold is held
    page.locator(f'#dice [data-die="{advised[0]}"]').tap()
    expect(page.locator("#dice .die.held")).to_have_count(len(advised) - 1)
    expect(keep).to_be_visible()


def test_quick_taps_on_several_dice_are_all_held(table, open_page):
    table.post("/api/games", {"players": ["Ana"]})
    table.post("/api/roll", {"dice": [1, 2, 3, 4, 5]})
    page = open_page(table.url)
    expect(page.locator('#dice [data-die="4"]')).to_have_attribute("aria-label", re.compile("^Die 5: 5"))
    # four taps before the table has answered the first
    page.evaluate("[0, 1, 3, 4].forEach(i => document.querySelector(`#dice [data-die='${i}']`).click())")
    expect(page.locator("#dice .die.held")).to_have_count(4)
    wait_for_holds_sent(page, 4)
    assert table.state()["game"]["held"] == [0, 1, 3, 4]


def test_entering_a_roll_by_hand_with_dice_held_asks_only_for_the_thrown_ones(table, open_page):
    table.post("/api/games", {"players": ["Ana"]})
    table.post("/api/roll", {"dice": [4, 4, 1, 4, 2]})
    table.post("/api/hold", {"positions": [0, 1, 3]})
    page = open_page(table.url)
    page.locator("#manual-roll").tap()
    expect(page.locator("#manual-held")).to_have_text("Held: 4 4 4. Enter the thrown dice.")
    slots = page.locator("#manual-slots .manual-slot")
    expect(slots).to_have_count(2)
    assert [slot.get_attribute("aria-label") for slot in slots.all()] == ["Die 3", "Die 5"]
    page.locator('#manual-keys [data-value="4"]').tap()
    page.locator('#manual-keys [data-value="4"]').tap()  # the last value saves the roll
    expect(page.locator("#roll-line")).to_have_text("Roll 2 of 3")
    assert shown_dice(page) == [4, 4, 4, 4, 4]
    expect(page.locator("#yacht-banner")).to_be_visible()


def test_the_camera_asks_which_dice_were_kept_advisors_keep_first(table, open_page):
    table.post("/api/games", {"players": ["Ana"]})
    camera = table.engine.table
    page = open_page(table.url)
    other = open_page(table.url)
    camera.camera_reading(seen(in_a_row([1, 2, 2, 4, 6], 0)))
    expect(page.locator("#roll-line")).to_have_text("Roll 1 of 3")
    advised = table.state()["game"]["advice"]["best_keep"]
    assert 0 < len(advised) < 5
    camera.camera_reading(seen(in_a_row([4, 4, 6, 3][:5 - len(advised)], 2)))
    dialog = page.locator("#dialog-kept")
    expect(dialog).to_be_visible()
    expect(page.locator("#kept-title")).to_have_text("Which dice did you keep?")
    first = page.locator("#kept-choices .kept-choice").first
    expect(first).to_contain_text("Advisor's keep")
    expect(other.locator("#dialog-kept")).to_be_visible()  # every tablet asks
    screenshot(page, "tablet-which-kept")
    phone = open_page(table.url, viewport=PHONE)
    expect(phone.locator("#dialog-kept")).to_be_visible()
    screenshot(phone, "phone-which-kept")
    first.tap()
    expect(page.locator("#roll-line")).to_have_text("Roll 2 of 3")
    expect(dialog).to_be_hidden()
    expect(other.locator("#dialog-kept")).to_be_hidden()
    game, roll = table.state()["game"], table.engine.table.session.game.actions[-1]
    assert sorted(game["dice"][p] for p in roll.held) == sorted(advised)


def test_not_now_leaves_the_question_and_a_hold_that_fits_answers_it(table, open_page):
    table.post("/api/games", {"players": ["Ana"]})
    camera = table.engine.table
    page = open_page(table.url)
    camera.camera_reading(seen(in_a_row([1, 2, 3, 5, 6], 0)))
    expect(page.locator("#roll-line")).to_have_text("Roll 1 of 3")
    camera.camera_reading(seen(in_a_row([4], 2)))  # one die thrown, four kept aside: which four?
    expect(page.locator("#dialog-kept")).to_be_visible()
    page.locator("#kept-not-now").tap()
    expect(page.locator("#dialog-kept")).to_be_hidden()
    for die in (1, 2, 3):  # the player says instead which were kept, a die at a time
        page.locator(f'#dice [data-die="{die}"]').tap()
    expect(page.locator("#roll-line")).to_have_text("Roll 1 of 3")
    page.locator('#dice [data-die="4"]').tap()  # the fourth: the throw now makes a roll
    expect(page.locator("#roll-line")).to_have_text("Roll 2 of 3")
    assert shown_dice(page) == [4, 2, 3, 5, 6]


def test_a_kept_die_that_shows_another_face_is_asked_about(table, open_page):
    table.post("/api/games", {"players": ["Ana"]})
    camera = table.engine.table
    page = open_page(table.url)
    first = in_a_row([5, 5, 5, 2, 1], 0)
    camera.camera_reading(seen(first))
    expect(page.locator("#roll-line")).to_have_text("Roll 1 of 3")
    # the 5s stay; one of them is knocked over to a 3; the 2 and the 1 are thrown
    camera.camera_reading(seen([first[0], first[1], (3, first[2][1]), *in_a_row([6, 6], 2)]))
    expect(page.locator("#kept-title")).to_have_text("A kept die shows another face")
    choices = page.locator("#kept-choices .kept-choice")
    expect(choices).to_have_text([re.compile("It was bumped: as it was"), re.compile("Count it as it lies")])
    screenshot(page, "tablet-bumped")
    assert table.state()["game"]["roll_number"] == 1  # never taken silently
    choices.first.tap()
    expect(page.locator("#roll-line")).to_have_text("Roll 2 of 3")
    assert shown_dice(page) == [5, 5, 5, 6, 6]


class Tray:
    """The dice of one turn where they lie, by the table's positions, as the table's rules place
    them: a die left in the tray keeps its position, thrown dice fill the others left to right."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.places: list[tuple[int, tuple[float, float]]] = []
        self.last_seen: list[tuple[int, tuple[float, float]]] = []

    def throw(self, values, keep_in_tray=()):
        """`values` thrown to cells where no die lay; the dice at positions `keep_in_tray` lie where
        they lay. Returns what the camera sees."""
        taken = {cell for _, cell in self.last_seen}
        cells = self.rng.sample([cell for cell in CELLS if cell not in taken], len(values))
        self.last_seen = [self.places[p] for p in keep_in_tray] + list(zip(values, cells))
        return self.last_seen

    def rolled(self, dice):
        """Where the dice of the roll `dice` now lie, from the dice last seen."""
        order = sorted(self.last_seen, key=lambda die: die[1])
        stayed = [p for p, place in enumerate(self.places) if place in order]
        fresh = iter(die for die in order if die not in [self.places[p] for p in stayed])
        self.places = [self.places[p] if p in stayed else next(fresh) for p in range(5)]
        assert [value for value, _ in self.places] == dice


STYLES = ("hold these", "answer the question", "left in the tray")


def test_a_whole_game_thrown_only_with_the_re_rolled_dice_counting_taps(table, open_page):
    """Twelve turns played as the advisor advises, every throw read by the camera and no number
    typed: the kept dice set aside (held first with one tap on "Hold these", or the camera's
    question answered with one tap after the throw) or left lying in the tray (no tap at all).
    The taps of every turn are counted, recording included."""
    table.post("/api/games", {"players": ["Ana"]})
    camera = table.engine.table
    page = open_page(table.url, viewport=TABLET)
    rng = random.Random(21)
    taps = {style: [] for style in STYLES}  # the taps of each turn, by how its dice were kept
    throws = questions = 0
    for turn in range(12):
        style = STYLES[turn % 3]
        tray = Tray(rng)
        count, number = 0, 1
        dice_seen = tray.throw([rng.randint(1, 6) for _ in range(5)])
        expected = sorted(value for value, _ in dice_seen)
        while True:
            camera.camera_reading(seen(dice_seen))
            throws += 1
            question = table.state()["camera"]["question"]
            if question is not None:
                questions += 1
                choice = page.locator("#kept-choices .kept-choice").first
                expect(choice).to_contain_text("Advisor's keep")  # the keep just made, first
                choice.tap()
                count += 1
            expect(page.locator("#roll-line")).to_contain_text(f"Roll {number} of 3")
            game = table.state()["game"]
            assert sorted(game["dice"]) == expected and game["dice_source"] == "camera"
            if style == "left in the tray":
                tray.rolled(game["dice"])
            advice = game["advice"]
            if number == 3 or len(advice["best_keep"]) == 5:
                break
            keep = advice["best_keep_positions"]
            if style == "hold these" and page.locator("#keep-these").is_visible():
                page.locator("#keep-these").tap()
                count += 1
                page.wait_for_function(f"page.state.game.held.join() === '{','.join(map(str, sorted(keep)))}'")
            thrown = [rng.randint(1, 6) for _ in range(5 - len(keep))]
            dice_seen = tray.throw(thrown, keep_in_tray=keep if style == "left in the tray" else ())
            expected = sorted([game["dice"][p] for p in keep] + thrown)
            number += 1
        best = page.locator("#sheet button.option.best")
        best.tap()
        page.locator("#confirm-record").tap()
        count += 2
        taps[style].append(count)
        if turn < 11:  # recorded: the next turn's throw is the next turn's
            expect(page.locator("#turn-number")).to_have_text(f"Turn {turn + 2} of 12")
    expect(page.locator("#screen-over")).to_be_visible()
    history = table.state()["game"]["history"]
    assert len(history) == 12 and all(t["rolls"] == len(t["throws"]) for t in history)
    assert any(throw["held"] for t in history for throw in t["throws"])
    figures = {style.replace(" ", "_"): {"turns": len(counts), "taps_per_turn": round(sum(counts) / len(counts), 2),
                                         "most_taps": max(counts)} for style, counts in taps.items()}
    figures["all"] = {"turns": 12, "taps_per_turn": round(sum(map(sum, taps.values())) / 12, 2),
                      "camera_throws": throws, "questions_answered": questions, "numbers_typed": 0}
    record_measurement("taps_per_turn_kept_dice", figures)
    assert max(taps["left in the tray"]) == 2  # recording only: the camera tells kept dice by place
    assert all(max(counts) <= 4 for counts in taps.values())
    screenshot(page, "tablet-kept-dice-game-over")
