"""Live updates: every change reaches every open event stream, through the table's own server."""

from __future__ import annotations

import http.client
import json
import threading
import time
from urllib.parse import urlsplit

import pytest
from table_helpers import built_advisor, http_json, served, table_app

from webui.app import sse_stream
from webui.engine.events import Broadcaster


class EventStream:
    """A client of /api/events reading events as they arrive."""

    def __init__(self, base_url: str, last_event_id: int | None = None, source: str = "127.0.0.1"):
        parts = urlsplit(base_url)
        assert parts.hostname is not None
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10,
                                                     source_address=(source, 0))
        headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        self.connection.request("GET", "/api/events", headers=headers)
        self.response = self.connection.getresponse()
        assert self.response.status == 200
        assert (self.response.getheader("Content-Type") or "").startswith("text/event-stream")

    def next_event(self) -> tuple[int, dict]:
        fields: dict[str, str] = {}
        while True:
            line = self.response.fp.readline().decode()
            if line in ("\n", "\r\n", ""):
                if "data" in fields:
                    return int(fields["id"]), json.loads(fields["data"])
                if line == "":
                    raise EOFError("the stream ended")
                fields = {}
                continue
            name, _, value = line.rstrip("\n").partition(": ")
            fields[name] = value

    def close(self) -> None:
        self.connection.close()


@pytest.fixture
def server(tmp_path):
    app = table_app(tmp_path, advisor=built_advisor())
    with served(app) as base_url:
        yield base_url


def test_two_clients_get_the_state_at_once_and_every_change(server):
    first, second = EventStream(server), EventStream(server)
    try:
        version_a, state_a = first.next_event()
        version_b, state_b = second.next_event()
        assert version_a == version_b == state_a["version"] and state_a == state_b
        assert state_a["game"] is None

        status, created = http_json("POST", f"{server}/api/games",
                                    {"players": ["Ana", "Ben"], "version": version_a})
        assert status == 201
        for stream in (first, second):
            version, state = stream.next_event()
            assert version == created["version"] == version_a + 1
            assert state["game"]["players"] == ["Ana", "Ben"]

        http_json("POST", f"{server}/api/roll", {"dice": [3, 3, 3, 3, 3], "version": version})
        for stream in (first, second):
            version, state = stream.next_event()
            assert state["game"]["dice"] == [3, 3, 3, 3, 3] and state["version"] == version
    finally:
        first.close()
        second.close()


def test_a_client_that_reconnects_gets_the_current_state_at_once(server):
    _, state = http_json("GET", f"{server}/api/state")
    http_json("POST", f"{server}/api/games", {"players": ["Ana"], "version": state["version"]})
    stream = EventStream(server, last_event_id=state["version"])
    try:
        version, current = stream.next_event()
        assert version == state["version"] + 1 and current["game"]["players"] == ["Ana"]
    finally:
        stream.close()


def test_many_open_streams_do_not_starve_ordinary_requests(tmp_path):
    """Twelve phones with the page and the camera open, twice over (24 streams made the old
    thread-per-stream server deaf), from six addresses."""
    app = table_app(tmp_path, advisor=built_advisor())
    with served(app) as server:
        check_not_starved(server, stream_count=48)


def check_not_starved(server: str, stream_count: int) -> None:
    streams = [EventStream(server, source=f"127.0.0.{2 + n % 6}") for n in range(stream_count)]
    try:
        started = time.monotonic()
        for _ in range(10):
            assert http_json("GET", f"{server}/api/state", timeout=5)[0] == 200
        assert time.monotonic() - started < 5
    finally:
        for stream in streams:
            stream.close()


def test_an_idle_stream_sends_keep_alive_comments_and_ends_on_close():
    broadcaster = Broadcaster(7, '{"version":7}')
    stream = sse_stream(broadcaster, keep_alive=0.01)
    chunks = iter(stream)
    assert next(chunks) == b'retry: 2000\nid: 7\nevent: state\ndata: {"version":7}\n\n'
    assert next(chunks) == b": keep-alive\n\n"
    broadcaster.publish(8, '{"version":8}')
    assert next(chunks) == b'id: 8\nevent: state\ndata: {"version":8}\n\n'
    threading.Timer(0.05, broadcaster.close).start()
    remaining = list(chunks)  # ends only because the broadcaster closed
    assert set(remaining) <= {b": keep-alive\n\n"}
