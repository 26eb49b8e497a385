"""A scripted camera for tests of anything that reads frames (the supervisor, the table loop).

It plays a list of images in a loop and can be told, at any moment, to fail once, to stall (open but
silent), to be unplugged (reads fail and re-opening fails) and to come back.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np

from .frames import (
    DEFAULT_READ_TIMEOUT,
    Camera,
    CameraDisconnected,
    CameraError,
    CameraTimeout,
    CameraUnavailable,
    Frame,
    camera_picture,
)


def blank_image(width: int = 64, height: int = 48, grey: int = 128) -> np.ndarray:
    return np.full((height, width, 3), grey, dtype=np.uint8)


class FakeCamera(Camera):
    """Cycles through `images`; `open()` is its factory, failing while the fake is unplugged.

    `frame_interval` spaces frames in time (0 = as fast as read); reads while stalled wait out their
    timeout, so tests see exactly what a silent real camera looks like.
    """

    def __init__(self, images: Sequence[np.ndarray] | None = None, *, frame_interval: float = 0.0,
                 name: str = "fake camera"):
        images = list(images) if images is not None else [blank_image()]
        if not images:
            raise ValueError("a fake camera needs at least one image")
        self.images = [camera_picture(image, name) for image in images]
        self.frame_interval = frame_interval
        self.name = name
        self.source = "fake"
        self.opened = 0
        self.closed = True
        self._index = 0
        self._plugged = True
        self._stalled = False
        self._failures: list[CameraError] = []
        self._wake = threading.Event()
        self._lock = threading.Lock()

    # the device's side, driven by the test
    def unplug(self) -> None:
        with self._lock:
            self._plugged = False
        self._wake.set()

    def plug_in(self) -> None:
        with self._lock:
            self._plugged = True
            self._stalled = False
        self._wake.set()

    def stall(self) -> None:
        with self._lock:
            self._stalled = True

    def resume(self) -> None:
        with self._lock:
            self._stalled = False
        self._wake.set()

    def fail_next(self, error: CameraError | None = None) -> None:
        with self._lock:
            self._failures.append(error or CameraError(f"{self.name}: scripted failure"))

    # the program's side
    def open(self) -> FakeCamera:
        with self._lock:
            if not self._plugged:
                raise CameraUnavailable(f"{self.name} is not connected")
            self.closed = False
            self.opened += 1
        return self

    def read(self, timeout: float = DEFAULT_READ_TIMEOUT) -> Frame:
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                if self.closed:
                    raise CameraDisconnected(f"{self.name} is closed")
                if not self._plugged:
                    raise CameraDisconnected(f"{self.name} was unplugged")
                if self._failures:
                    raise self._failures.pop(0)
                if not self._stalled:
                    break
                self._wake.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CameraTimeout(f"{self.name} sent no picture for {timeout:.1f} s")
            self._wake.wait(remaining)
        if self.frame_interval:
            time.sleep(self.frame_interval)
        with self._lock:
            image = self.images[self._index % len(self.images)]
            frame = Frame(image=image, timestamp=time.monotonic(), index=self._index)
            self._index += 1
        return frame

    def close(self) -> None:
        with self._lock:
            self.closed = True
        self._wake.set()
