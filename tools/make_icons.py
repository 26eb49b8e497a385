"""Draws the home-screen icons of the tablet page (webui/static/icons/) from its die (die.svg), with
Debian's Chromium: the die on the table's green, inside the middle 60% so a launcher may crop the
square to a circle ("maskable") without cutting it.

    python tools/make_icons.py
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import sync_playwright

STATIC = Path(__file__).resolve().parents[1] / "webui" / "static"
SIZES = {"icon-192.png": 192, "icon-512.png": 512, "apple-touch-icon.png": 180}
GREEN = "#14532d"


def page_for(size: int, die_svg: str) -> str:
    return (f"<html><body style='margin:0;width:{size}px;height:{size}px;background:{GREEN};"
            "display:flex;align-items:center;justify-content:center'>"
            f"<div style='width:{round(size * 0.6)}px;height:{round(size * 0.6)}px'>"
            f"{die_svg.replace('<svg ', '<svg width=100% height=100% ', 1)}</div></body></html>")


def main() -> None:
    die_svg = (STATIC / "die.svg").read_text()
    out = STATIC / "icons"
    out.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        for name, size in SIZES.items():
            page = browser.new_page(viewport={"width": size, "height": size})
            page.set_content(page_for(size, die_svg))
            page.screenshot(path=str(out / name))
            page.close()
            print(out / name)
        browser.close()


if __name__ == "__main__":
    main()
