"""Helpers shared by the table service's tests: a real advisor built once, and an API client that
carries the state version the way the tablet page does."""

from __future__ import annotations

import contextlib
import functools
import json
import threading
import urllib.error
import urllib.request

import waitress

from scorer.advisor import Advisor
from webui.app import shutdown


@functools.lru_cache(maxsize=1)
def built_advisor() -> Advisor:
    return Advisor.build()


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
def served(app, threads: int = 8):
    """`app` behind a real waitress server on a free local port; yields its base URL."""
    server = waitress.create_server(app, host="127.0.0.1", port=0, threads=threads)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.effective_port}"
    finally:
        shutdown(app)
        server.close()
        server.task_dispatcher.shutdown(timeout=2)


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
