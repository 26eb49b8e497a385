"""Helpers shared by the table's tests: a real advisor built once, a table app over a temporary
data dir, and an API client that carries the state version the way the tablet page does."""

from __future__ import annotations

import contextlib
import functools
import json
import urllib.error
import urllib.request
from pathlib import Path

from scorer import CATEGORIES
from scorer.advisor import Advisor
from webui.app import EXTENSION, create_app
from webui.engine import Engine, Settings, open_engine
from webui.server import serving_in_thread


@functools.lru_cache(maxsize=1)
def built_advisor() -> Advisor:
    return Advisor.build()


def table_engine(data_dir, *, advisor=None, open_camera=None, start: bool = True, loop_options=None,
                 **fields) -> Engine:
    """A table over `data_dir`; no camera unless `open_camera` (or a `camera` setting) says so."""
    settings = Settings(data_dir=Path(data_dir), **{"camera": "off", **fields})
    return open_engine(settings, advisor=advisor, open_camera=open_camera, start=start, **(loop_options or {}))


def table_app(data_dir, **options):
    """The HTTP adapter over `table_engine(data_dir, **options)`; end it with `shutdown(app)`."""
    return create_app(table_engine(data_dir, **options))


def shutdown(app) -> None:
    app.extensions[EXTENSION].close()


class TableClient:
    """Flask test client plus the version bookkeeping of a tablet."""

    def __init__(self, app, pin: str | None = None):
        self.app = app
        self.http = app.test_client()
        self.pin = pin

    def state(self) -> dict:
        response = self.http.get("/api/state")
        assert response.status_code == 200
        return response.get_json()

    @property
    def version(self) -> int:
        return self.state()["version"]

    def post(self, path: str, body=None, *, version: object = "current", headers=None, **options):
        if isinstance(body, dict) and version == "current":
            body = dict(body, version=self.version)
        sent = {"Origin": "http://localhost"}
        if self.pin is not None:
            sent["X-Table-Pin"] = self.pin
        sent.update(headers or {})
        if isinstance(body, (dict, list)) or body is None and "data" not in options:
            return self.http.post(path, json=body, headers=sent, **options)
        return self.http.post(path, headers=sent, **options)

    def new_game(self, players=("Ana", "Ben")) -> dict:
        response = self.post("/api/games", {"players": list(players)})
        assert response.status_code == 201, response.get_json()
        return response.get_json()


@contextlib.contextmanager
def served(app):
    """`app` behind the table's own HTTP server (webui.server) on a free local port; yields its
    base URL. The table is shut down afterwards."""
    try:
        with serving_in_thread(app, live_ended=app.extensions[EXTENSION].end_streams) as server:
            yield f"http://127.0.0.1:{server.port}"
    finally:
        shutdown(app)


def http_json(method: str, url: str, body=None, timeout: float = 10.0) -> tuple[int, dict]:
    """One request with the standard library; (status, JSON body) whatever the status."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def error_fields(code: str) -> set[str]:
    """The fields of an API error: a stale write's also says how the game moved on."""
    return {"code", "message", "field"} | ({"changed"} if code == "stale_version" else set())


def check_game(game: dict) -> None:
    """What any game state sent to a tablet must satisfy."""
    assert game["totals"] == [sum(sheet.values()) for sheet in game["sheets"]]
    assert sum(len(sheet) for sheet in game["sheets"]) == len(game["history"])
    assert 0 <= game["roll_number"] <= 3
    assert (game["dice"] is None) == (game["roll_number"] == 0)
    if game["is_over"]:
        assert game["current_player"] is None and game["winners"]
    else:
        assert game["current_player"] == len(game["history"]) % len(game["players"])
        assert game["rolls_left"] == 3 - game["roll_number"]
        assert set(game["open_scores"]) <= set(CATEGORIES) - set(game["sheets"][game["current_player"]])
    assert all(isinstance(name, str) and 0 < len(name) <= 24 for name in game["players"])
