"""Helpers shared by the table service's tests: a real advisor built once, and an API client that
carries the state version the way the tablet page does."""

from __future__ import annotations

import functools

from scorer.advisor import Advisor


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
