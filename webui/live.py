"""Live response bodies: a stream that follows a Broadcaster for as long as its client stays.

A `LiveStream` is a WSGI body. Iterated, it blocks its thread between changes, which is fine for the
Flask test client or any WSGI server; the table's own server (webui.server) recognises it and
follows the broadcaster on its event loop instead, where an open stream costs no thread and a
client that goes away releases it at once.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Protocol

# (version, payload) -> the bytes to send, or None to send nothing this time
Render = Callable[[int, Any], bytes | None]


class Broadcaster(Protocol):
    """The newest (version, payload) of something that changes (the table's events.Broadcaster)."""

    @property
    def closed(self) -> bool: ...

    def latest(self) -> tuple[int, Any]: ...

    def wait_newer(self, seen_version: int, timeout: float) -> tuple[int, Any] | None: ...


class LiveStream:
    """What to send when a client starts following `broadcaster` (`opening`), on every newer
    version (`change`), and after `idle_seconds` without one (`idle`, to show the connection is
    alive). `kind` names the stream for the server's per-client limits."""

    def __init__(self, kind: str, broadcaster: Broadcaster, *, opening: Render, change: Render,
                 idle: Render, idle_seconds: float):
        self.kind = kind
        self.broadcaster = broadcaster
        self.opening = opening
        self.change = change
        self.idle = idle
        self.idle_seconds = idle_seconds

    def __iter__(self) -> Iterator[bytes]:
        seen = self.broadcaster.latest()
        first = self.opening(*seen)
        if first:
            yield first
        while not self.broadcaster.closed:
            newer = self.broadcaster.wait_newer(seen[0], self.idle_seconds)
            if self.broadcaster.closed:
                return
            seen, chunk = self.after_wait(seen, newer)
            if chunk:
                yield chunk

    def after_wait(self, seen: tuple[int, Any], newer: tuple[int, Any] | None
                   ) -> tuple[tuple[int, Any], bytes | None]:
        """The (version, payload) seen once a wait ended with `newer` (None: it timed out), and
        what to send for it."""
        if newer is None:
            return seen, self.idle(*seen)
        return newer, self.change(*newer)


class AsyncFeed:
    """A Broadcaster's newest (version, payload) mirrored onto an event loop: one thread waits on
    the broadcaster and wakes the loop, however many streams await it there."""

    def __init__(self, broadcaster: Broadcaster, loop: asyncio.AbstractEventLoop):
        self._broadcaster = broadcaster
        self._loop = loop
        self._latest = broadcaster.latest()
        self._closed = broadcaster.closed
        self._changed = asyncio.Event()
        threading.Thread(target=self._follow, name="live-feed", daemon=True).start()

    @property
    def closed(self) -> bool:
        return self._closed

    def latest(self) -> tuple[int, Any]:
        return self._latest

    async def wait_newer(self, seen_version: int, timeout: float) -> tuple[int, Any] | None:
        """Like Broadcaster.wait_newer, awaited: the newest once its version differs from
        `seen_version`, or None after `timeout` seconds or once closed."""
        changed = self._changed
        if self._latest[0] == seen_version and not self._closed:
            try:
                async with asyncio.timeout(timeout):
                    await changed.wait()
            except TimeoutError:
                return None
        if self._closed or self._latest[0] == seen_version:
            return None
        return self._latest

    async def follow(self, stream: LiveStream) -> AsyncIterator[bytes]:
        """The chunks `stream` sends, until the broadcaster closes."""
        seen = self.latest()
        first = stream.opening(*seen)
        if first:
            yield first
        while not self._closed:
            newer = await self.wait_newer(seen[0], stream.idle_seconds)
            if self._closed:
                return
            seen, chunk = stream.after_wait(seen, newer)
            if chunk:
                yield chunk

    def _follow(self) -> None:
        version = self._latest[0]
        while True:
            newer = self._broadcaster.wait_newer(version, 1.0)
            closed = self._broadcaster.closed
            if newer is not None:
                version = newer[0]
            if newer is not None or closed:
                try:
                    self._loop.call_soon_threadsafe(self._publish, newer, closed)
                except RuntimeError:  # the loop has closed: the server is gone
                    return
            if closed:
                return

    def _publish(self, newer: tuple[int, Any] | None, closed: bool) -> None:
        if newer is not None:
            self._latest = newer
        self._closed = closed
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
