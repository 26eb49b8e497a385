"""The table's HTTP server (webui.server): ordinary requests on worker threads, live streams and
idle connections on the event loop, each client address held to its share, slow or half-sent
requests closed. Clients connect from several loopback addresses (127.0.0.2, 127.0.1.x...)."""

from __future__ import annotations

import http.client
import json
import re
import socket
import threading
import time
from typing import Any

import pytest
from flask import Flask, Response, request
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webui.engine.events import Broadcaster
from webui.live import LiveStream
from webui.server import Limits, serving_in_thread

FAST = Limits(header_seconds=0.5, body_seconds=0.5, idle_seconds=1.0, send_seconds=2.0,
              connections_per_client=6, streams_per_client=3, max_body_bytes=1024)


def live_text(version: int, payload: str) -> bytes:
    return f"{version}:{payload}\n".encode()


def make_app(broadcaster: Broadcaster) -> Flask:
    app = Flask(__name__)

    @app.get("/hello")
    def hello():
        return {"hello": request.remote_addr}

    @app.post("/echo")
    def echo():
        return {"length": len(request.get_data())}

    @app.get("/pieces")
    def pieces():
        return Response((f"piece {n}\n" for n in range(3)), mimetype="text/plain")

    @app.get("/live")
    def live():
        stream = LiveStream("numbers", broadcaster, opening=live_text, change=live_text,
                            idle=lambda version, payload: b":\n", idle_seconds=0.2)
        return Response(stream, mimetype="text/plain", direct_passthrough=True)

    return app


@pytest.fixture
def broadcaster():
    return Broadcaster(1, "one")


@pytest.fixture
def server(broadcaster):
    with serving_in_thread(make_app(broadcaster), limits=FAST, live_ended=broadcaster.close) as running:
        yield running


def connect(server, source: str = "127.0.0.2") -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=5, source_address=(source, 0))


def get_json(server, path: str, source: str = "127.0.0.2") -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5, source_address=(source, 0))
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def read_until_closed(sock: socket.socket, limit: float = 5.0) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and how long that took; a
    TimeoutError if it is still open after `limit` seconds (a live stream keeps sending)."""
    started = time.monotonic()
    received = b""
    try:
        while True:
            left = limit - (time.monotonic() - started)
            if left <= 0:
                raise TimeoutError(f"still open after {limit} s: {received[-200:]!r}")
            sock.settimeout(left)
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    except ConnectionResetError:
        pass
    return received, time.monotonic() - started


def open_live(server, source: str) -> socket.socket:
    sock = connect(server, source)
    sock.sendall(b"GET /live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    return sock


def read_some(sock: socket.socket, until: bytes, limit: float = 5.0) -> bytes:
    sock.settimeout(limit)
    received = b""
    while until not in received:
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError(received)
        received += chunk
    return received


def test_requests_are_answered_kept_alive_and_pipelined(server):
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    for _ in range(3):
        connection.request("GET", "/hello")
        response = connection.getresponse()
        assert response.status == 200 and json.loads(response.read()) == {"hello": "127.0.0.1"}
    connection.request("POST", "/echo", body=b"x" * 700, headers={"Content-Type": "text/plain"})
    assert json.loads(connection.getresponse().read()) == {"length": 700}
    connection.request("HEAD", "/hello")
    head = connection.getresponse()
    assert head.status == 200 and head.read() == b""
    connection.request("GET", "/pieces")
    assert connection.getresponse().read() == b"piece 0\npiece 1\npiece 2\n"
    connection.close()

    sock = connect(server)
    sock.sendall(b"GET /hello HTTP/1.1\r\nHost: a\r\n\r\nGET /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    received, _ = read_until_closed(sock)
    assert received.count(b"HTTP/1.1 200 OK") == 2


@pytest.mark.parametrize("sent, status, code", [
    (b"GARBAGE\r\n\r\n", 400, "bad_request"),
    (b"GET / HTTP/1.1\r\n\r\n", 400, "bad_request"),  # HTTP/1.1 without a Host
    (b"GET /hello HTTP/1.1\r\nHost: a\r\nX: " + b"y" * 20000 + b"\r\n\r\n", 431, "headers_too_large"),
    (b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5000\r\n\r\n", 413, "too_large"),
    (b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n" + b"x" * 2048 + b"\r\n",
     413, "too_large"),
])
def test_a_bad_request_is_refused_in_the_apis_error_shape(server, sent, status, code):
    sock = connect(server)
    sock.sendall(sent)
    received, _ = read_until_closed(sock)
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(f"HTTP/1.1 {status} ".encode()), head
    assert json.loads(body)["error"]["code"] == code


def test_a_half_sent_request_is_closed_at_its_deadline_however_it_trickles(server):
    sock = connect(server)
    sock.sendall(b"GET /hello HTTP/1.1\r\nHost: a\r\n")
    started = time.monotonic()
    try:
        for _ in range(10):  # a byte every 0.2 s: still slower than the whole head's deadline
            time.sleep(0.2)
            sock.sendall(b"X")
    except (BrokenPipeError, ConnectionResetError):
        pass
    received, _ = read_until_closed(sock)
    assert received.startswith(b"HTTP/1.1 408 ")
    assert time.monotonic() - started < FAST.header_seconds + 1.5


def test_a_silent_connection_and_an_idle_kept_alive_one_are_closed(server):
    silent = connect(server)
    received, waited = read_until_closed(silent)
    assert received == b"" and FAST.header_seconds * 0.8 < waited < FAST.header_seconds + 1.0

    kept = connect(server)
    kept.sendall(b"GET /hello HTTP/1.1\r\nHost: a\r\n\r\n")
    received, waited = read_until_closed(kept)
    assert received.startswith(b"HTTP/1.1 200 ")
    assert FAST.idle_seconds * 0.8 < waited < FAST.idle_seconds + 1.0


def test_one_address_cannot_take_every_connection(server):
    hoard = [connect(server, "127.0.0.2") for _ in range(3 * FAST.connections_per_client)]
    time.sleep(0.2)
    assert server.stats()["connections"] <= FAST.connections_per_client
    # Its newest connection still works (its oldest idle one made room), and so does everyone else.
    assert get_json(server, "/hello", "127.0.0.2")[0] == 200
    started = time.monotonic()
    assert get_json(server, "/hello", "127.0.0.3") == (200, {"hello": "127.0.0.3"})
    assert time.monotonic() - started < 2.0  # answered at once: no thread or slot is held by the others
    for sock in hoard:
        sock.close()


def test_a_clients_newest_stream_closes_its_oldest_beyond_its_share(server, broadcaster):
    mine = []
    for _ in range(FAST.streams_per_client + 2):
        mine.append(open_live(server, "127.0.0.2"))
        read_some(mine[-1], b"1:one\n")
    other = open_live(server, "127.0.0.3")
    read_some(other, b"1:one\n")
    for oldest in mine[:2]:
        _, waited = read_until_closed(oldest)
        assert waited < 1.0
    broadcaster.publish(2, "two")
    for sock in [*mine[2:], other]:
        assert b"2:two\n" in read_some(sock, b"2:two\n")
        sock.close()


def test_hundreds_of_streams_take_no_thread_and_a_closed_one_is_released_at_once(server, broadcaster):
    threads_before = threading.active_count()
    streams = [open_live(server, f"127.0.{1 + n // 200}.{1 + n % 200}") for n in range(300)]
    for sock in streams:
        read_some(sock, b"1:one\n")
    assert server.stats()["streams"] == 300
    # The workers that ran the app and the loop's feed thread: no thread per stream.
    assert threading.active_count() <= threads_before + FAST.workers + 1
    started = time.monotonic()
    assert get_json(server, "/hello")[0] == 200
    assert time.monotonic() - started < 2.0  # answered at once: no thread or slot is held by the others
    broadcaster.publish(2, "two")
    for sock in streams:
        read_some(sock, b"2:two\n")
    for sock in streams:
        sock.close()
    deadline = time.monotonic() + 2.0
    while server.stats()["streams"] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.stats() == {"connections": 0, "waiting": 0, "streams": 0}


def test_stopping_ends_every_stream_at_once(broadcaster):
    with serving_in_thread(make_app(broadcaster), limits=FAST, live_ended=broadcaster.close) as server:
        streams = [open_live(server, "127.0.0.2") for _ in range(2)]
        for sock in streams:
            read_some(sock, b"1:one\n")
        started = time.monotonic()
    assert time.monotonic() - started < 2.0
    for sock in streams:
        received, _ = read_until_closed(sock, limit=2.0)
        assert received.endswith(b"0\r\n\r\n")  # the chunked body's end: the stream ended cleanly


def test_an_app_that_raises_gets_a_500_in_the_apis_error_shape():
    def broken(environ, start_response):
        raise RuntimeError("boom")

    with serving_in_thread(broken, limits=FAST) as server:
        assert get_json(server, "/anything") == (500, {"error": {
            "code": "internal_error", "message": "the table hit an unexpected error; it has been logged",
            "field": None}})


def test_a_live_stream_iterated_blocks_between_changes_like_any_wsgi_body(broadcaster):
    stream = iter(LiveStream("numbers", broadcaster, opening=live_text, change=live_text,
                             idle=lambda version, payload: b":\n", idle_seconds=0.01))
    assert next(stream) == b"1:one\n"
    assert next(stream) == b":\n"
    broadcaster.publish(2, "two")
    assert next(stream) == b"2:two\n"
    threading.Timer(0.05, broadcaster.close).start()
    assert set(stream) <= {b":\n"}  # ends once the broadcaster closes


# Raw requests through the server, as bytes on the wire (the app's own fuzz is in test_api_fuzz.py).
WIRE_FUZZ_REQUESTS = 300

request_lines = st.one_of(
    st.sampled_from([b"GET /hello HTTP/1.1", b"POST /echo HTTP/1.1", b"GET /hello HTTP/1.0", b"GET /hello",
                     b"GET http://a/hello HTTP/1.1", b"OPTIONS * HTTP/1.1", b"GET /%zz%00 HTTP/1.1",
                     b"BREW /pot HTTP/1.1", b"GET /hello HTTP/2.0", b"GET  /hello  HTTP/1.1", b""]),
    st.binary(max_size=60))
header_lines = st.lists(st.one_of(
    st.sampled_from([b"Host: a", b"Host:", b"Host: a\r\nHost: b", b"Content-Length: 3", b"Content-Length: -1",
                     b"Content-Length: 99999999999999999999", b"Transfer-Encoding: chunked",
                     b"Transfer-Encoding: gzip, chunked", b"Expect: 100-continue", b"Connection: close",
                     b"Connection: keep-alive, Upgrade", b"Upgrade: websocket", b"X_Table_Pin: 1",
                     b" folded", b"\x00: \xff", b"Content-Type: application/json"]),
    st.binary(max_size=40)), max_size=6)


@settings(max_examples=WIRE_FUZZ_REQUESTS, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request_lines, header_lines, st.binary(max_size=80))
def test_whatever_bytes_arrive_the_server_answers_without_a_5xx_or_closes(line, headers, body):
    sock = connect(WIRE_SERVER["server"])
    try:
        sock.sendall(line + b"\r\n" + b"".join(header + b"\r\n" for header in headers) + b"\r\n" + body)
        sock.shutdown(socket.SHUT_WR)  # nothing more comes: the server must answer or close now
        received, _ = read_until_closed(sock, limit=5.0)
    finally:
        sock.close()
    for status in re.findall(rb"HTTP/1\.[01] (\d{3}) ", received):
        assert int(status) < 500, received[:300]


WIRE_SERVER: dict[str, Any] = {}


@pytest.fixture(autouse=True, scope="module")
def wire_server():
    broadcaster = Broadcaster(1, "one")
    with serving_in_thread(make_app(broadcaster), limits=FAST, live_ended=broadcaster.close) as server:
        WIRE_SERVER["server"] = server
        yield
    WIRE_SERVER.clear()
