"""Keeps a camera running for the table: a camera that goes silent or disappears is reported offline
with the reason within `stall_seconds`, re-opened with growing pauses, and picked up when it returns.
The game never waits on the camera: it takes the frames as they come, and is told each change of status."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from enum import StrEnum

from .frames import Camera, CameraError, Frame

log = logging.getLogger(__name__)


class CameraState(StrEnum):
    """The camera's condition as the tablet shows it. The supervisor knows OFF, OFFLINE and LIVE
    (a camera being opened is OFFLINE until its first frame); the table adds READING while it reads
    a settled throw and UNSURE when what it read cannot count as a roll."""

    OFF = "off"
    OFFLINE = "offline"
    LIVE = "live"
    READING = "reading"
    UNSURE = "unsure"


@dataclass(frozen=True)
class CameraFeed:
    """How the supervised camera is doing. `since` is monotonic seconds; while offline,
    `failures` counts failed attempts in a row and `retry_in` is the pause before the next one."""

    state: CameraState
    message: str
    source: str
    since: float
    frames: int = 0
    failures: int = 0
    retry_in: float | None = None


def retry_delay(attempt: int, initial: float, maximum: float) -> float:
    """Pause before re-opening after `attempt` failures in a row: doubling from `initial` up to `maximum`."""
    return min(maximum, initial * 2 ** min(attempt, 32))


class CameraSupervisor:
    """Runs `open_camera()` and reads from what it returns on a background thread.

    `open_camera` is called again after every failure, so it must open the source afresh (for
    example `lambda: hardware.camera.open_camera(settings.camera, **settings.camera_options())`).
    Frames are renumbered so that indexes keep increasing across reconnections.
    """

    def __init__(self, open_camera: Callable[[], Camera], *, source: str = "camera",
                 stall_seconds: float = 1.5, retry_initial: float = 0.5, retry_maximum: float = 5.0):
        if stall_seconds <= 0:
            raise ValueError(f"stall_seconds must be above 0, got {stall_seconds}")
        self._open_camera = open_camera
        self.source = source
        self.stall_seconds = stall_seconds
        self.retry_initial = retry_initial
        self.retry_maximum = retry_maximum
        self._condition = threading.Condition()
        self._stop = threading.Event()
        self._latest: Frame | None = None
        self._frame_count = 0
        self._status = CameraFeed(CameraState.OFFLINE, f"opening {source}", source, time.monotonic())
        self._listeners: list[Callable[[CameraFeed], None]] = []
        self._thread: threading.Thread | None = None

    # ---- what the service uses
    @property
    def status(self) -> CameraFeed:
        with self._condition:
            return replace(self._status, frames=self._frame_count)

    def wait_for_frame(self, after: int = -1, timeout: float | None = None) -> Frame | None:
        """The first live frame with an index above `after`, or None on timeout or stop. Never a
        frame from before the camera went offline, so nobody reads dice from a picture of the past."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._condition:
            while not self._stop.is_set():
                frame = self._latest
                if frame is not None and frame.index > after and self._status.state is CameraState.LIVE:
                    return frame
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._condition.wait(remaining)
        return None

    def frames(self) -> Iterator[Frame]:
        """Every new live frame (the newest, when the consumer is slower than the camera) until stop."""
        last = -1
        while not self._stop.is_set():
            frame = self.wait_for_frame(after=last, timeout=self.stall_seconds)
            if frame is not None:
                last = frame.index
                yield frame

    def add_status_listener(self, listener: Callable[[CameraFeed], None]) -> None:
        """`listener(status)` is called on the supervisor thread at each change of state."""
        self._listeners.append(listener)

    # ---- lifecycle
    def start(self) -> CameraSupervisor:
        if self._thread is not None:
            raise RuntimeError("camera supervisor already started")
        self._thread = threading.Thread(target=self._run, name=f"camera {self.source}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 3.0) -> None:
        self._stop.set()
        with self._condition:
            self._condition.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
        self._set_status(CameraState.OFF, "camera stopped")

    def __enter__(self) -> CameraSupervisor:
        return self if self._thread is not None else self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    # ---- the background thread
    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                camera = self._open_camera()
            except CameraError as error:
                failures = self._pause_after(str(error), failures)
                continue
            except Exception as error:  # a broken driver must not end supervision; log it in full
                log.exception("opening %s failed", self.source)
                failures = self._pause_after(f"{type(error).__name__}: {error}", failures)
                continue
            try:
                reason, delivered = self._read_until_failure(camera)
            finally:
                camera.close()
            if reason is None:
                return
            failures = self._pause_after(reason, 0 if delivered else failures)

    def _read_until_failure(self, camera: Camera) -> tuple[str | None, bool]:
        """Read until stop (returns None) or a failure (returns its reason); also whether any frame came."""
        delivered = False
        while not self._stop.is_set():
            try:
                frame = camera.read(timeout=self.stall_seconds)
            except CameraError as error:
                return f"{camera.name}: {error}" if camera.name not in str(error) else str(error), delivered
            except Exception as error:
                log.exception("reading %s failed", camera.name)
                return f"{camera.name}: {type(error).__name__}: {error}", delivered
            delivered = True
            with self._condition:
                self._latest = replace(frame, index=self._frame_count)
                self._frame_count += 1
                became_live = self._status.state is not CameraState.LIVE
                if became_live:
                    self._status = CameraFeed(CameraState.LIVE, camera.name, self.source, time.monotonic())
                self._condition.notify_all()
            if became_live:
                self._notify()
        return None, delivered

    def _pause_after(self, reason: str, failures: int) -> int:
        delay = retry_delay(failures, self.retry_initial, self.retry_maximum)
        self._set_status(CameraState.OFFLINE, reason, failures=failures + 1, retry_in=delay)
        self._stop.wait(delay)
        return failures + 1

    def _set_status(self, state: CameraState, message: str, failures: int = 0, retry_in: float | None = None) -> None:
        with self._condition:
            previous = self._status
            same_state = (previous.state, previous.message) == (state, message)
            self._status = CameraFeed(state, message, self.source,
                                        previous.since if same_state else time.monotonic(),
                                        failures=failures, retry_in=retry_in)
            self._condition.notify_all()
        if state is CameraState.OFFLINE and not same_state:
            # once per new reason, not at every retry: this is what the service's log shows
            log.warning("camera %s offline: %s", self.source, message)
        self._notify()

    def _notify(self) -> None:
        status = self.status
        for listener in list(self._listeners):
            try:
                listener(status)
            except Exception:
                log.exception("camera status listener failed")
