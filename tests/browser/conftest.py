"""A real table service on 127.0.0.1 (free port, temporary data dir, no camera) driven by Debian's
Chromium through Playwright. Skipped, saying why, when either is missing."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # imported for annotations only: the browser tests skip cleanly without the table
    from hardware.frames import Camera
    from scorer.advisor import Advisor

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
TABLET = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"browser tests need Debian's Chromium at {CHROMIUM} (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def advisor(tmp_path_factory):
    from scorer.advisor import Advisor

    return Advisor.load(cache_dir=tmp_path_factory.mktemp("advisor"))


@dataclass
class LiveTable:
    """One table service on a real socket, restartable on the same port over the same data."""

    data_dir: Path
    advisor: Advisor
    pin: str | None = None
    port: int = 0
    camera: Callable[[], Camera] | None = None  # opens a camera; its loop starts with `engine.start()`
    source: str | None = None  # a camera by name instead ("demo"), opened as the table would

    def start(self) -> None:
        from werkzeug.serving import WSGIRequestHandler, make_server

        from webui.app import create_app
        from webui.engine import Settings, open_engine

        class QuietHandler(WSGIRequestHandler):
            def log_request(self, *args, **kwargs):
                pass

        source = self.source or ("off" if self.camera is None else "auto")
        settings = Settings(data_dir=self.data_dir, pin=self.pin, camera=source)
        self.engine = open_engine(settings, open_camera=self.camera, advisor=self.advisor, start=False)
        self.app = create_app(self.engine)
        self.server = make_server(
            "127.0.0.1", self.port, self.app, threaded=True, request_handler=QuietHandler
        )
        self.port = self.server.server_port
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.engine.close()  # ends the event streams, so the server's threads can finish
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)

    def __enter__(self) -> LiveTable:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def state(self) -> dict:
        with urllib.request.urlopen(self.url + "/api/state", timeout=5) as response:
            return json.load(response)

    def post(self, path: str, payload: dict) -> dict:
        body = json.dumps({**payload, "version": self.state()["version"]}).encode()
        headers = {"Content-Type": "application/json"}
        if self.pin:
            headers["X-Table-Pin"] = self.pin
        request = urllib.request.Request(self.url + path, data=body, headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=5) as response:
            return json.load(response)


@pytest.fixture
def table(tmp_path, advisor):
    live = LiveTable(data_dir=tmp_path / "data", advisor=advisor)
    live.start()
    yield live
    live.stop()


@pytest.fixture
def open_page(browser):
    """Opens pages in fresh browser contexts (separate tablets); closes them after the test."""
    contexts = []

    def open_page(url: str, viewport: dict = TABLET, color_scheme: str = "light"):
        context = browser.new_context(
            viewport=viewport, has_touch=True, locale="en-GB", color_scheme=color_scheme
        )
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(5000)
        errors = []
        page.on("pageerror", lambda error: errors.append(error))
        page.script_errors = errors
        page.goto(url)
        return page

    yield open_page
    for context in contexts:
        assert not [e for p in context.pages for e in p.script_errors], "the page raised a script error"
        context.close()


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


MEASUREMENTS = SCREENSHOTS.parent / "measurements.json"


def record_measurement(name: str, figures: dict) -> None:
    """Keeps a figure the browser tests measured (taps, lost taps, redraw time) for the closing note
    and CI's artifacts: artifacts/measurements.json, one entry per measurement, the last run's."""
    MEASUREMENTS.parent.mkdir(parents=True, exist_ok=True)
    known = json.loads(MEASUREMENTS.read_text()) if MEASUREMENTS.exists() else {}
    known[name] = figures
    MEASUREMENTS.write_text(json.dumps(known, indent=2, sort_keys=True) + "\n")
    print(f"{name}: {figures}")
