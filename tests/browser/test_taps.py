"""Taps that must not be lost: a finger held on a die or a row while the table keeps sending states."""

from __future__ import annotations

import threading

import pytest

from hardware.supervisor import CameraState

from .conftest import TABLET, record_measurement

playwright = pytest.importorskip("playwright.sync_api", reason="browser tests need playwright")
expect = playwright.expect

HELD_TAPS = 100
HOLD_MS = 180
# Much faster than a real camera's status changes (about one a second), so every hold sees several.
EVENT_INTERVAL_S = 0.05


class StatusFlicker:
    """Camera status changes sent from another thread, each one a new state on every tablet."""

    def __init__(self, service):
        self.service = service
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        tick = 0
        while not self.stop.wait(EVENT_INTERVAL_S):
            tick += 1
            self.service.camera_changed(CameraState.LIVE, f"frame {tick}")

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def held_tap(cdp, page, box, finger: bool) -> None:
    """A finger (or a mouse button) down for HOLD_MS in the middle of `box`, then up: a tap, not a
    long press."""
    point = {"x": box["x"] + box["width"] / 2, "y": box["y"] + box["height"] / 2}
    if finger:
        cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [point]})
        page.wait_for_timeout(HOLD_MS)
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    else:
        page.mouse.move(point["x"], point["y"])
        page.mouse.down()
        page.wait_for_timeout(HOLD_MS)
        page.mouse.up()


OPEN_DIALOG = "() => document.querySelector('dialog[open]')?.id ?? null"


def test_no_held_tap_is_lost_while_states_arrive(table, open_page):
    table.post("/api/games", {"players": ["Ana", "Ben"]})
    for _ in range(3):  # no throw left: a tap on a die corrects it (between throws it holds it)
        table.post("/api/roll", {"dice": [2, 3, 3, 5, 6]})
    page = open_page(table.url)
    expect(page.locator('#sheet button.option[data-category="choice"]')).to_be_visible()
    cdp = page.context.new_cdp_session(page)
    # Half the taps on dice (each opens the die's picker), half on rows (each opens the Record question).
    targets = [(page.locator(f'#dice [data-die="{i}"]'), "dialog-die") for i in range(5)]
    targets += [(page.locator(f'#sheet button.option[data-category="{c}"]'), "dialog-confirm")
                for c in ("choice", "threes", "sixes", "fives", "little_straight")]
    # Where a finger goes, found before the states start coming: all within the screen.
    targets = [(target.bounding_box(), dialog) for target, dialog in targets]
    assert all(0 < box["y"] and box["y"] + box["height"] < TABLET["height"] for box, _ in targets)
    service = table.engine.table
    version_before = page.evaluate("page.state.version")
    lost = []
    with StatusFlicker(service):
        for tap in range(HELD_TAPS):
            box, dialog = targets[tap % len(targets)]
            held_tap(cdp, page, box, finger=(tap // len(targets)) % 2 == 0)
            try:
                page.wait_for_function(f"({OPEN_DIALOG})() === '{dialog}'", timeout=1500)
            except playwright.TimeoutError:
                lost.append(tap)
                continue
            page.evaluate("document.querySelector('dialog[open]').close()")
    states_seen = page.evaluate("page.state.version") - version_before
    record_measurement("lost_taps", {"held_taps": HELD_TAPS, "hold_ms": HOLD_MS, "lost": len(lost),
                                     "states_during_taps": states_seen})
    assert states_seen > HELD_TAPS  # the page really was being sent states throughout
    assert lost == [], f"{len(lost)} of {HELD_TAPS} held taps were lost"
