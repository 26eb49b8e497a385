"""A tablet that lies on the table for an hour: added to the home screen from the page's manifest, and
its screen kept on while a game is played."""

from __future__ import annotations

import pytest

from scorer import CATEGORIES

expect = pytest.importorskip("playwright.sync_api", reason="browser tests need playwright").expect

MANIFEST = """async () => {
  const link = document.querySelector('link[rel="manifest"]');
  const response = await fetch(link.href);
  const manifest = await response.json();
  const icons = await Promise.all(manifest.icons.map((icon) => new Promise((resolve) => {
    const image = new Image();
    image.onload = () => resolve([icon.sizes, `${image.naturalWidth}x${image.naturalHeight}`, icon.purpose]);
    image.onerror = () => resolve([icon.sizes, 'not loaded', icon.purpose]);
    image.src = new URL(icon.src, link.href).href;
  })));
  return { type: response.headers.get('content-type'), manifest, icons };
}"""


def test_the_page_can_be_added_to_the_home_screen_full_screen(table, open_page):
    page = open_page(table.url)
    found = page.evaluate(MANIFEST)
    assert found["type"].startswith("application/json")
    manifest = found["manifest"]
    assert (manifest["start_url"], manifest["display"], manifest["short_name"]) == ("/", "fullscreen", "Yacht")
    assert found["icons"] == [["192x192", "192x192", "any maskable"], ["512x512", "512x512", "any maskable"]]
    apple = page.locator('link[rel="apple-touch-icon"]').get_attribute("href")
    assert page.evaluate(f"fetch('{apple}').then((r) => r.status)") == 200


AWAKE = "page.wakeLock !== null && !page.wakeLock.released"


def set_visibility(page, state: str) -> None:
    """What the browser does when the tablet shows another app or its screen goes off."""
    page.evaluate(f"""() => {{
      Object.defineProperty(document, 'visibilityState', {{ get: () => '{state}', configurable: true }});
      document.dispatchEvent(new Event('visibilitychange'));
    }}""")


def test_the_screen_stays_on_during_a_game_and_only_then(table, open_page):
    table.post("/api/games", {"players": ["Ana"]})
    for category in CATEGORIES[:-1]:
        table.post("/api/roll", {"dice": [1, 2, 3, 4, 6]})
        table.post("/api/record", {"category": category})
    page = open_page(table.url)
    expect(page.locator("#turn-title")).to_have_text("Ana's turn")
    page.wait_for_function(AWAKE)
    lock = page.evaluate_handle("page.wakeLock")

    set_visibility(page, "hidden")  # another app on top: let go
    page.wait_for_function("page.wakeLock === null")
    assert lock.evaluate("lock => lock.released")
    set_visibility(page, "visible")  # back to the game: on again
    page.wait_for_function(AWAKE)

    table.post("/api/roll", {"dice": [1, 1, 1, 1, 1]})
    table.post("/api/record", {"category": CATEGORIES[-1]})  # the last row: the game is over
    expect(page.locator("#screen-over")).to_be_visible()
    page.wait_for_function("page.wakeLock === null")
