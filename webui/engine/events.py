"""Live updates: the newest state (or preview picture), handed to every watcher as it changes.

Each update carries the whole state, so a watcher that falls behind simply skips to the newest one;
nothing queues up per watcher and a slow tablet cannot hold back the others.
"""

from __future__ import annotations

import threading
from typing import Any


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
