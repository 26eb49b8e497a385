"""What every camera source shares: the Frame it delivers, the errors it raises, the Camera
interface, and BackgroundCamera for drivers whose read call blocks."""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from vision.imaging import as_bgr

DEFAULT_READ_TIMEOUT = 1.5


@dataclass(frozen=True)
class Frame:
    """One picture: BGR uint8 array (height, width, 3), monotonic capture time, running index."""

    image: np.ndarray
    timestamp: float
    index: int


class CameraError(Exception):
    """A camera could not deliver a frame; the message is fit for the tablet's status line."""


class CameraUnavailable(CameraError):
    """The source cannot be opened: missing device, missing library, missing files."""


class CameraDisconnected(CameraError):
    """The source was open and went away (USB pulled, stream ended)."""


class CameraTimeout(CameraError):
    """The source is open but delivered no frame in time."""


class Camera(ABC):
    """A source of frames. Not thread-safe: one reader at a time."""

    source: str
    name: str

    @abstractmethod
    def read(self, timeout: float = DEFAULT_READ_TIMEOUT) -> Frame:
        """The next frame, waiting at most `timeout` seconds; raises a CameraError subclass on failure."""

    @abstractmethod
    def close(self) -> None:
        """Release the device. Safe to call twice."""

    def __enter__(self) -> Camera:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def camera_picture(image: np.ndarray, origin: str) -> np.ndarray:
    """Frames are always 3-channel uint8: a grey or BGRA picture is converted, anything else refused
    with a CameraError naming where it came from."""
    try:
        return as_bgr(image)
    except ValueError as error:
        raise CameraError(f"{origin}: {error}") from None


class BackgroundCamera(Camera):
    """A camera whose driver call blocks: a thread keeps grabbing so `read` returns the newest
    picture, not one that waited in the driver's queue while the dice moved, and so `read` honours
    its timeout even when the driver hangs on a pulled cable."""

    def _start_grabbing(self) -> None:
        self._condition = threading.Condition()
        self._latest: Frame | None = None
        self._failure: CameraError | None = None
        self._returned_index = -1
        self._stopping = False
        self._thread = threading.Thread(target=self._grab_loop, name=f"grab {self.name}", daemon=True)
        self._thread.start()

    @abstractmethod
    def _grab(self) -> np.ndarray:
        """Block until the driver has the next picture; raise CameraError when it cannot."""

    @abstractmethod
    def _release(self) -> None:
        """Free the driver; called once the grab thread is out of `_grab`."""

    def _grab_loop(self) -> None:
        index = 0
        while not self._stopping:
            try:
                image = camera_picture(self._grab(), self.name)
                failure = None
            except CameraError as error:
                failure = error
            except Exception as error:  # a driver fault must reach the reader, not kill the thread silently
                failure = CameraDisconnected(f"{self.name} failed: {type(error).__name__}: {error}")
            with self._condition:
                if self._stopping:
                    return
                if failure is not None:
                    self._failure = failure
                    self._condition.notify_all()
                    return
                self._latest = Frame(image, time.monotonic(), index)
                index += 1
                self._condition.notify_all()

    def read(self, timeout: float = DEFAULT_READ_TIMEOUT) -> Frame:
        deadline = time.monotonic() + timeout
        with self._condition:
            while True:
                if self._latest is not None and self._latest.index > self._returned_index:
                    self._returned_index = self._latest.index
                    return self._latest
                if self._failure is not None:
                    raise self._failure
                if self._stopping:
                    raise CameraDisconnected(f"{self.name} is closed")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise CameraTimeout(f"{self.name} sent no picture for {timeout:.1f} s")
                self._condition.wait(remaining)

    def close(self) -> None:
        with self._condition:
            if self._stopping:
                return
            self._stopping = True
            self._condition.notify_all()
        self._thread.join(timeout=2.0)
        if not self._thread.is_alive():
            self._release()
