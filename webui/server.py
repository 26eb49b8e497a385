"""The table's HTTP/1.1 server: one asyncio event loop holds every connection and live stream; a few
worker threads run the Flask app for ordinary requests.

A thread per connection let a dozen phones' streams, or a hundred idle sockets, take every thread.
Here an idle connection or an open stream is only a little memory on the loop, and each client
address is held to its share: so many connections, so many streams of each kind (a new one closes
that client's oldest), so many requests computed at once. A connection must send its request
promptly and whole; one that does not is closed. Parsing is h11's; see docs/serving.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import sys
import threading
import time
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import unquote_to_bytes

import h11

from .live import AsyncFeed, LiveStream

log = logging.getLogger(__name__)

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


@dataclass(frozen=True)
class Limits:
    """What one client address, and all together, may hold. The defaults leave a household's
    tablets and phones far inside them (a browser opens at most 6 connections to one host)."""

    connections: int = 1000  # in all; lowered to fit the process's file limit
    connections_per_client: int = 32
    streams_per_client: int = 8  # of each kind (live updates, camera): a new one closes the oldest
    requests_per_client: int = 4  # computed at once; more wait their turn
    workers: int = 8  # threads running the Flask app
    header_seconds: float = 5.0  # a new connection's request, or a started one, must be in by then
    body_seconds: float = 10.0
    idle_seconds: float = 30.0  # a kept-alive connection between requests
    send_seconds: float = 30.0  # a client that takes nothing for this long is dropped
    max_header_bytes: int = 16 * 1024
    max_body_bytes: int = 64 * 1024  # the app takes far less (security.MAX_REQUEST_BYTES)


class _Refusal(Exception):
    """A request the server answers itself, before the app: status, code and message."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status = status
        self.code = code


def _error_body(status: int, code: str, message: str) -> tuple[h11.Response, bytes]:
    """The API's error shape (see the README's API section), for refusals made by the server."""
    body = json.dumps({"error": {"code": code, "message": message, "field": None}}).encode()
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
               ("Connection", "close")]
    return h11.Response(status_code=status, reason=HTTPStatus(status).phrase, headers=headers), body


@dataclass
class _Client:
    """What one address holds right now."""
    connections: int = 0
    requests: asyncio.Semaphore | None = None
    last_warned: float = 0.0


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, address: str, port: int,
                 max_header_bytes: int):
        self.reader = reader
        self.writer = writer
        self.address = address
        self.port = port
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=max_header_bytes)
        self.answered = 0  # requests answered on this connection

    def close(self) -> None:
        self.writer.transport.abort()


class TableServer:
    """Serves a WSGI `app` on `host`:`port` (0: any free port). `live_ended` is called, when the
    server stops, to end the broadcasters the live streams follow."""

    def __init__(self, app: WSGIApp, host: str, port: int, *, limits: Limits = Limits(),
                 live_ended: Callable[[], None] | None = None):
        self.app = app
        self.host = host
        self.port = port
        self.limits = _fit_to_file_limit(limits)
        self.live_ended = live_ended
        self._clients: dict[str, _Client] = defaultdict(_Client)
        self._connections: set[_Connection] = set()
        # Connections waiting for a request, oldest first: never answered yet, and kept alive after one.
        self._fresh: OrderedDict[_Connection, None] = OrderedDict()
        self._idle: OrderedDict[_Connection, None] = OrderedDict()
        self._answering = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._streams: dict[tuple[str, str], OrderedDict[_Connection, None]] = defaultdict(OrderedDict)
        self._feeds: dict[int, AsyncFeed] = {}
        self._pool = ThreadPoolExecutor(self.limits.workers, thread_name_prefix="table-request")
        self._server: asyncio.Server | None = None
        self._stopping: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # --- running -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Listen (OSError if the address is taken or not ours)."""
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        self._server = await asyncio.start_server(self._accept, self.host, self.port,
                                                  limit=self.limits.max_header_bytes, backlog=512)
        self.port = self._server.sockets[0].getsockname()[1]

    async def serve_until_stopped(self) -> None:
        assert self._stopping is not None and self._server is not None
        await self._stopping.wait()
        self._server.close()
        loop = asyncio.get_running_loop()
        if self.live_ended is not None:
            await loop.run_in_executor(None, self.live_ended)
        # Requests being answered get a moment to finish; streams end as their broadcasters close.
        deadline = loop.time() + 5.0
        while (self._answering or self._streams) and loop.time() < deadline:
            await asyncio.sleep(0.02)
        for connection in list(self._connections):
            connection.close()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=2.0)
        self._pool.shutdown(wait=False, cancel_futures=True)

    def stop(self) -> None:
        """Stop serving; callable from any thread or a signal handler."""
        if self._loop is not None and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)

    def stats(self) -> dict[str, int]:
        """Connections, connections without a whole request yet, and open live streams."""
        return {"connections": len(self._connections), "waiting": len(self._fresh) + len(self._idle),
                "streams": sum(len(streams) for streams in self._streams.values())}

    # --- connections ---------------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername") or ("", 0)
        address = str(peer[0]).removeprefix("::ffff:")
        connection = _Connection(reader, writer, address, int(peer[1]), self.limits.max_header_bytes)
        if not self._admit(connection):
            writer.transport.abort()
            return
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._serve(connection)
        except (ConnectionError, TimeoutError, asyncio.IncompleteReadError):
            pass
        except Exception:
            log.exception("unexpected error on a connection from %s", address)
        finally:
            self._tasks.discard(task)
            self._forget(connection)
            connection.close()

    def _admit(self, connection: _Connection) -> bool:
        """Room for a new connection: a client at its share, or the server full, first gives up its
        oldest connection waiting for a request (one never answered before one kept alive);
        failing that, the new one is refused."""
        client = self._clients[connection.address]
        if client.connections >= self.limits.connections_per_client \
                and not self._evict_waiting(lambda c: c.address == connection.address):
            self._warn(connection.address, client, "connections")
            return False
        if len(self._connections) >= self.limits.connections and not self._evict_waiting(lambda c: True):
            self._warn(connection.address, client, "connections (the server is full)")
            return False
        client.connections += 1
        if client.requests is None:
            client.requests = asyncio.Semaphore(self.limits.requests_per_client)
        self._connections.add(connection)
        self._fresh[connection] = None
        return True

    def _evict_waiting(self, which: Callable[[_Connection], bool]) -> bool:
        for waiting in (*self._fresh, *self._idle):
            if which(waiting):
                self._forget(waiting)
                waiting.close()
                return True
        return False

    def _forget(self, connection: _Connection) -> None:
        if connection not in self._connections:
            return
        self._connections.discard(connection)
        self._fresh.pop(connection, None)
        self._idle.pop(connection, None)
        self._end_stream(connection)
        client = self._clients[connection.address]
        client.connections -= 1
        if client.connections <= 0:
            del self._clients[connection.address]

    def _end_stream(self, connection: _Connection) -> None:
        for key in [key for key, streams in self._streams.items() if connection in streams]:
            del self._streams[key][connection]
            if not self._streams[key]:
                del self._streams[key]

    def _warn(self, address: str, client: _Client, what: str) -> None:
        now = time.monotonic()
        if now - client.last_warned > 60:
            client.last_warned = now
            log.warning("%s holds as many %s as it may; further ones are refused", address, what)

    async def _serve(self, connection: _Connection) -> None:
        """Requests one after another on one connection, until either side closes it."""
        limits = self.limits
        while True:
            first = connection.answered == 0
            try:
                request = await self._next_event(
                    connection, limits.header_seconds if first else limits.idle_seconds,
                    limits.header_seconds)
            except h11.RemoteProtocolError as error:
                # h11 hints 501 for a transfer coding it lacks: still the request's fault, a 4xx
                status = error.error_status_hint if 400 <= error.error_status_hint < 500 else 400
                await self._refuse(connection, _Refusal(status, _code_for(status),
                                                        f"the request is not valid HTTP/1.1: {error}"))
                return
            except TimeoutError:
                if connection.h11.their_state is h11.SEND_BODY or _has_partial(connection):
                    await self._refuse(connection, _Refusal(408, "request_timeout",
                                                            "the request did not arrive in time"))
                return
            if request is None:  # closed by the client
                return
            assert isinstance(request, h11.Request)
            # h11 bounds a head only while it is incomplete: one that arrived whole is measured here.
            if len(request.target) + sum(len(n) + len(v) + 4 for n, v in request.headers) > limits.max_header_bytes:
                await self._refuse(connection, _Refusal(431, "headers_too_large",
                                                        "the request's headers are too large"))
                return
            try:
                body = await self._read_body(connection, request)
            except _Refusal as refusal:
                await self._refuse(connection, refusal)
                return
            self._fresh.pop(connection, None)
            self._idle.pop(connection, None)
            kept = await self._answer(connection, request, body)
            connection.answered += 1
            if not kept or connection.h11.our_state is not h11.DONE or connection.h11.their_state is not h11.DONE:
                return
            connection.h11.start_next_cycle()
            self._idle[connection] = None

    async def _next_event(self, connection: _Connection, wait_seconds: float,
                          complete_seconds: float) -> h11.Event | None:
        """The next request's head: its first byte must come within `wait_seconds`, and the whole
        head within `complete_seconds` of that."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_seconds
        started = _has_partial(connection)
        if started:
            deadline = loop.time() + complete_seconds
        while True:
            event = connection.h11.next_event()
            if event is h11.NEED_DATA:
                async with asyncio.timeout_at(deadline):
                    data = await connection.reader.read(65536)
                if not data:
                    return None
                connection.h11.receive_data(data)
                if data and not started:
                    started = True
                    deadline = loop.time() + complete_seconds
                continue
            if isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
                return None
            assert isinstance(event, h11.Event)
            return event

    async def _read_body(self, connection: _Connection, request: h11.Request) -> bytes:
        limits = self.limits
        length = _header(request, b"content-length")
        if length is not None and int(length) > limits.max_body_bytes:
            raise _Refusal(413, "too_large", f"the request body is over {limits.max_body_bytes} bytes")
        if connection.h11.they_are_waiting_for_100_continue:
            self._write(connection, connection.h11.send(h11.InformationalResponse(status_code=100, headers=[])))
        chunks, size = [], 0
        deadline = asyncio.get_running_loop().time() + limits.body_seconds
        try:
            async with asyncio.timeout_at(deadline):
                while True:
                    event = connection.h11.next_event()
                    if event is h11.NEED_DATA:
                        connection.h11.receive_data(await connection.reader.read(65536))
                    elif isinstance(event, h11.Data):
                        size += len(event.data)
                        if size > limits.max_body_bytes:
                            raise _Refusal(413, "too_large",
                                           f"the request body is over {limits.max_body_bytes} bytes")
                        chunks.append(bytes(event.data))
                    elif isinstance(event, h11.EndOfMessage):
                        return b"".join(chunks)
                    else:  # the client closed half-way
                        raise ConnectionResetError
        except TimeoutError:
            raise _Refusal(408, "request_timeout", "the request body did not arrive in time") from None
        except h11.RemoteProtocolError as error:
            raise _Refusal(400, "bad_request", f"the request body is not valid HTTP/1.1: {error}") from None

    async def _refuse(self, connection: _Connection, refusal: _Refusal) -> None:
        if connection.h11.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return
        response, body = _error_body(refusal.status, refusal.code, str(refusal))
        try:
            data = connection.h11.send(response) + connection.h11.send(h11.Data(data=body)) + \
                connection.h11.send(h11.EndOfMessage())
        except h11.LocalProtocolError:  # h11 cannot frame an answer to what it could not parse
            data = _raw_response(response, body)
        self._write(connection, data)
        with contextlib.suppress(ConnectionError, TimeoutError):
            await self._drain(connection)

    # --- answering -----------------------------------------------------------------------------

    async def _answer(self, connection: _Connection, request: h11.Request, body: bytes) -> bool:
        """Run the app for `request` and send its answer; False when the connection must close."""
        client = self._clients[connection.address]
        assert client.requests is not None
        environ = self._environ(connection, request, body)
        loop = asyncio.get_running_loop()
        async with client.requests:
            self._answering += 1
            try:
                # The head comes back with a whole body, a live stream, or pieces to send one by one.
                status, reason, headers, content = await loop.run_in_executor(
                    self._pool, _call_app, self.app, environ)
            except Exception:
                log.exception("unexpected error answering %s %s", request.method, request.target)
                await self._refuse(connection, _Refusal(500, "internal_error",
                                                        "the table hit an unexpected error; it has been logged"))
                return False
            finally:
                self._answering -= 1
        if isinstance(content, bytes) and request.method != b"HEAD" and status >= 200 \
                and status not in (204, 304) and not any(k.lower() == "content-length" for k, _ in headers):
            headers = [*headers, ("Content-Length", str(len(content)))]
        response = h11.Response(status_code=status, reason=reason, headers=headers)
        if isinstance(content, bytes):
            self._write(connection, connection.h11.send(response))
            if content:
                self._write(connection, connection.h11.send(h11.Data(data=content)))
            self._write(connection, connection.h11.send(h11.EndOfMessage()))
            await self._drain(connection)
            return True
        self._write(connection, connection.h11.send(response))
        if isinstance(content, LiveStream):
            await self._follow(connection, content)
        else:
            await self._send_iterated(connection, content)
        return False  # a stream ends with its connection

    async def _follow(self, connection: _Connection, stream: LiveStream) -> None:
        """Send a live stream until the client leaves, the server stops or a newer stream from the
        same client takes its place."""
        streams = self._streams[(connection.address, stream.kind)]
        streams[connection] = None
        while len(streams) > self.limits.streams_per_client:
            oldest = next(iter(streams))
            del streams[oldest]
            oldest.close()
        feed = self._feed(stream)
        client_left = asyncio.ensure_future(self._until_closed(connection))
        sending = asyncio.ensure_future(self._send_live(connection, feed, stream))
        try:
            await asyncio.wait({client_left, sending}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            client_left.cancel()
            sending.cancel()
            self._end_stream(connection)

    async def _send_live(self, connection: _Connection, feed: AsyncFeed, stream: LiveStream) -> None:
        async for chunk in feed.follow(stream):
            self._write(connection, connection.h11.send(h11.Data(data=chunk)))
            await self._drain(connection)
        with contextlib.suppress(h11.LocalProtocolError):
            self._write(connection, connection.h11.send(h11.EndOfMessage()))
            await self._drain(connection)

    async def _until_closed(self, connection: _Connection) -> None:
        """Returns once the client closes; whatever else it sends while streaming is dropped."""
        while await connection.reader.read(65536):
            pass

    async def _send_iterated(self, connection: _Connection, content: _Pieces) -> None:
        """A body of unknown length: the pieces are pulled on a worker thread, one at a time, so a
        slow client holds back its own response only."""
        loop = asyncio.get_running_loop()
        try:
            while True:
                chunk = await loop.run_in_executor(self._pool, next, content.iterator, None)
                if chunk is None:
                    break
                if chunk:
                    self._write(connection, connection.h11.send(h11.Data(data=chunk)))
                    await self._drain(connection)
            self._write(connection, connection.h11.send(h11.EndOfMessage()))
            await self._drain(connection)
        finally:
            if content.close is not None:
                await loop.run_in_executor(self._pool, content.close)

    def _feed(self, stream: LiveStream) -> AsyncFeed:
        feed = self._feeds.get(id(stream.broadcaster))
        if feed is None:
            assert self._loop is not None
            feed = self._feeds[id(stream.broadcaster)] = AsyncFeed(stream.broadcaster, self._loop)
        return feed

    def _write(self, connection: _Connection, data: bytes) -> None:
        if data:
            connection.writer.write(data)

    async def _drain(self, connection: _Connection) -> None:
        transport = connection.writer.transport
        if transport.is_closing():
            raise ConnectionResetError("the connection is closed")
        if not transport.get_write_buffer_size():
            return  # all handed to the kernel already: no need for a timer
        async with asyncio.timeout(self.limits.send_seconds):
            await connection.writer.drain()

    def _environ(self, connection: _Connection, request: h11.Request, body: bytes) -> dict[str, Any]:
        """The WSGI environment (PEP 3333) for `request`."""
        target = request.target
        if target.startswith((b"http://", b"https://")):  # absolute form: keep the path
            target = b"/" + target.split(b"/", 3)[3] if target.count(b"/") >= 3 else b"/"
        path, _, query = target.partition(b"?")
        environ: dict[str, Any] = {
            "REQUEST_METHOD": request.method.decode("ascii"),
            "SCRIPT_NAME": "",
            "PATH_INFO": unquote_to_bytes(path).decode("latin-1"),
            "QUERY_STRING": query.decode("latin-1"),
            "SERVER_NAME": self.host or "0.0.0.0",
            "SERVER_PORT": str(self.port),
            "SERVER_PROTOCOL": f"HTTP/{request.http_version.decode('ascii')}",
            "REMOTE_ADDR": connection.address,
            "REMOTE_PORT": str(connection.port),
            "CONTENT_LENGTH": str(len(body)),
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
        }
        for name, value in request.headers:
            key = name.decode("latin-1").upper()
            if "_" in key:  # 'X_Table_Pin' would pass for 'X-Table-Pin' after the rename: drop it
                continue
            text = value.decode("latin-1")
            if key == "CONTENT-TYPE":
                environ["CONTENT_TYPE"] = text
            elif key != "CONTENT-LENGTH":
                key = "HTTP_" + key.replace("-", "_")
                environ[key] = f"{environ[key]},{text}" if key in environ else text
        return environ


@dataclass
class _Pieces:
    """A WSGI body of unknown length, sent as it is produced."""
    iterator: Iterator[bytes]
    close: Callable[[], None] | None


def _call_app(app: WSGIApp, environ: dict[str, Any]
              ) -> tuple[int, bytes, list[tuple[str, str]], bytes | LiveStream | _Pieces]:
    """Runs on a worker thread: the app's status, reason and headers, with its whole body when it
    says how long it is, or else the live stream or the pieces to send."""
    started: list[Any] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None):
        if exc_info is not None and started:
            raise exc_info[1].with_traceback(exc_info[2])
        started[:] = [status, headers]
        return _no_write

    result = app(environ, start_response)
    code, _, reason = started[0].partition(" ")
    status, headers = int(code), started[1]
    close = getattr(result, "close", None)
    if isinstance(result, LiveStream):
        return status, reason.encode("latin-1"), headers, result
    if any(name.lower() == "content-length" for name, _ in headers) or isinstance(result, (list, tuple)):
        try:
            return status, reason.encode("latin-1"), headers, b"".join(result)
        finally:
            if close is not None:
                close()
    return status, reason.encode("latin-1"), headers, _Pieces(iter(result), close)


def _no_write(data: bytes) -> None:
    raise NotImplementedError("the table's server does not support the WSGI write() callable")


def _header(message: h11.Request, name: bytes) -> bytes | None:
    for key, value in message.headers:
        if key == name:
            return value
    return None


def _has_partial(connection: _Connection) -> bool:
    return bool(connection.h11.trailing_data[0])


def _code_for(status: int) -> str:
    return "headers_too_large" if status == 431 else "bad_request"


def _raw_response(response: h11.Response, body: bytes) -> bytes:
    head = f"HTTP/1.1 {response.status_code} {response.reason.decode() or 'Error'}\r\n"
    head += "".join(f"{name.decode()}: {value.decode()}\r\n" for name, value in response.headers)
    return head.encode() + b"\r\n" + body


def _fit_to_file_limit(limits: Limits) -> Limits:
    """Raise this process's open-file limit as far as it may go, and keep the connection limit
    below it (with room for the database, camera and logs)."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = limits.connections + 200
        if soft != resource.RLIM_INFINITY and soft < wanted:
            soft = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        if soft != resource.RLIM_INFINITY and soft - 200 < limits.connections:
            from dataclasses import replace

            return replace(limits, connections=max(16, soft - 200))
    except (ImportError, ValueError, OSError):
        pass
    return limits


def serve(server: TableServer, ready: Callable[[], None] = lambda: None) -> None:
    """Run `server` on this thread until SIGINT or SIGTERM (or `server.stop()`); `ready()` once it
    listens. OSError if it cannot listen."""
    import signal

    async def main() -> None:
        await server.start()
        ready()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, server.stop)
        await server.serve_until_stopped()

    asyncio.run(main())


@contextlib.contextmanager
def serving_in_thread(app: WSGIApp, host: str = "127.0.0.1", port: int = 0, *,
                      limits: Limits = Limits(), live_ended: Callable[[], None] | None = None
                      ) -> Iterator[TableServer]:
    """`app` served on a background thread while the block runs (for tests and benchmarks)."""
    server = TableServer(app, host, port, limits=limits, live_ended=live_ended)
    started = threading.Event()
    failed: list[BaseException] = []

    async def main() -> None:
        try:
            await server.start()
        except BaseException as error:
            failed.append(error)
            raise
        finally:
            started.set()
        await server.serve_until_stopped()

    thread = threading.Thread(target=lambda: asyncio.run(main()), name="table-server", daemon=True)
    thread.start()
    started.wait()
    if failed:
        raise failed[0]
    try:
        yield server
    finally:
        server.stop()
        thread.join(timeout=10)
