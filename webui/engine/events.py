"""Live updates: the latest state, handed to every Server-Sent Events stream as it changes.

Each event carries the whole state, so a stream that falls behind simply skips to the newest one;
nothing queues up per client and a slow tablet cannot hold back the others.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

KEEP_ALIVE_SECONDS = 15.0
RECONNECT_MILLISECONDS = 2000


class Broadcaster:
    """Holds the newest (version, payload) and wakes every waiting stream when it changes. The
    payload is the state's JSON text for the event stream, or a JPEG for the camera preview."""

    def __init__(self, version: int, payload: Any):
        self._changed = threading.Condition()
        self._version = version
        self._payload = payload
        self._closed = False

    def publish(self, version: int, payload: Any) -> None:
        with self._changed:
            self._version = version
            self._payload = payload
            self._changed.notify_all()

    def latest(self) -> tuple[int, Any]:
        with self._changed:
            return self._version, self._payload

    def wait_newer(self, seen_version: int, timeout: float) -> tuple[int, Any] | None:
        """The newest state once its version differs from `seen_version`, or None after `timeout`
        seconds (or at once when closed)."""
        with self._changed:
            self._changed.wait_for(lambda: self._version != seen_version or self._closed, timeout)
            if self._version == seen_version or self._closed:
                return None
            return self._version, self._payload

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """End every stream (the server is stopping)."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()


def sse_event(version: int, text: str) -> str:
    return f"id: {version}\nevent: state\ndata: {text}\n\n"


def sse_stream(broadcaster: Broadcaster, keep_alive: float = KEEP_ALIVE_SECONDS) -> Iterator[str]:
    """The text of an event stream: the current state at once, then every change, with a comment
    line whenever `keep_alive` seconds pass in silence so proxies and idle timeouts keep it open."""
    version, text = broadcaster.latest()
    yield f"retry: {RECONNECT_MILLISECONDS}\n" + sse_event(version, text)
    while not broadcaster.closed:
        newer = broadcaster.wait_newer(version, keep_alive)
        if newer is None:
            if broadcaster.closed:
                return
            yield ": keep-alive\n\n"
        else:
            version, text = newer
            yield sse_event(version, text)
