"""The table loop: camera frames in, settled throws read, rolls into the game, a preview out.

It runs on its own thread behind a CameraSupervisor (which reopens a camera that fails and reports
it offline), feeds each frame to the settle detector, reads the dice once per resting scene, and
hands the reading to the Table, which decides whether it counts as a roll.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from hardware.supervisor import CameraFeed, CameraState, CameraSupervisor
from scorer.holds import same_scene

from .events import Broadcaster
from .table import Table

log = logging.getLogger(__name__)

# A Pi serving four previews must not spend its time encoding video: a few small frames a second.
PREVIEW_FPS = 4.0
PREVIEW_WIDTH = 640
PREVIEW_QUALITY = 70
STILL_QUALITY = 85


def encode_jpeg(image: np.ndarray, quality: int, max_width: int | None = None) -> bytes:
    if max_width is not None and image.shape[1] > max_width:
        height = round(image.shape[0] * max_width / image.shape[1])
        image = cv2.resize(image, (max_width, height), interpolation=cv2.INTER_AREA)
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError(f"could not encode a {image.shape} frame as JPEG")
    return data.tobytes()


def same_throw(before: Any, after: Any) -> bool:
    """The same dice showing the same faces in the same places: a scene seen again, not a new throw."""
    return before is not None and same_scene(before.dice, after.dice)


def _default_reader() -> tuple[Callable[[np.ndarray], Any], Callable[[np.ndarray, Any], np.ndarray]]:
    from vision import annotate, read_dice

    return read_dice, annotate


class TableLoop:
    """One camera, one settle detector, one reader, feeding one Table.

    `open_camera()` opens the camera afresh (it is called again after each failure). `read_dice`
    and `annotate` default to the vision package's; `make_detector()` to vision.settle's detector.
    `process(frame)` is the whole of one step, so tests can drive the loop frame by frame.
    """

    def __init__(self, open_camera: Callable[[], Any], table: Table, *, source: str = "camera",
                 settle_seconds: float = 0.3, read_dice: Callable | None = None,
                 annotate: Callable | None = None, make_detector: Callable[[], Any] | None = None,
                 preview_fps: float = PREVIEW_FPS):
        if read_dice is None or annotate is None:
            default_read, default_annotate = _default_reader()
            read_dice = read_dice or default_read
            annotate = annotate or default_annotate
        if make_detector is None:
            from vision.settle import SettleDetector

            def make_detector():
                return SettleDetector(still_seconds=settle_seconds)

        self.table = table
        self.supervisor = CameraSupervisor(open_camera, source=source)
        self.supervisor.add_status_listener(self._camera_changed)
        self.preview = Broadcaster(0, None)
        self._read_dice = read_dice
        self._annotate = annotate
        self._make_detector = make_detector
        self._detector = make_detector()
        self._preview_period = 1.0 / preview_fps
        self._last_preview: float | None = None
        self._shown_throw: np.ndarray | None = None  # the last throw's picture, shown until dice move
        self._still: bytes | None = None
        self._still_lock = threading.Lock()
        self._frame_shape: tuple[int, ...] | None = None
        self._last_reading: Any = None
        self._restart_detector = threading.Event()
        self._read_requested = threading.Event()
        self._thread: threading.Thread | None = None

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self) -> TableLoop:
        self.supervisor.start()
        self._thread = threading.Thread(target=self._run, name="table loop", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.supervisor.stop()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        self.preview.close()

    def read_now(self) -> None:
        """Read at the next frame whatever the settle detector says (the table's button: a die that
        keeps rocking, or a throw the detector missed): the mean of the frames since the dice last
        moved, as a settled throw is read."""
        self._read_requested.set()

    def still_jpeg(self) -> bytes | None:
        """The last reading, annotated, or None before the first."""
        with self._still_lock:
            return self._still

    def _run(self) -> None:
        for frame in self.supervisor.frames():
            try:
                self.process(frame)
            except Exception:
                # One bad frame must not end the table: log it in full and take the next one.
                log.exception("the table loop failed on frame %s", getattr(frame, "index", "?"))

    # --- one step ------------------------------------------------------------------------------

    def process(self, frame: Any) -> None:
        """Feed one camera frame (.image BGR, .timestamp seconds) through settle, read and game."""
        # A reopened camera, or one switched to another resolution, starts the detector afresh: it
        # compares frames of one size only.
        if self._restart_detector.is_set() or frame.image.shape != self._frame_shape:
            self._restart_detector.clear()
            self._frame_shape = frame.image.shape
            self._detector = self._make_detector()
        was_settled = self._detector.state == "settled"
        event = self._detector.update(frame.image, frame.timestamp)
        if self._detector.state == "moving" and was_settled:
            self._shown_throw = None
            self.table.camera_moving()
        if event is not None or self._read_requested.is_set():
            self._read_requested.clear()
            self._read(event.frame if event is not None else self._detector.frame_to_read(frame.image))
        self._send_preview(frame)

    def _read(self, image: np.ndarray) -> None:
        self.table.camera_changed(CameraState.READING)
        try:
            reading = self._read_dice(image)
        except Exception as error:
            log.exception("reading the dice failed")
            self._show(image)  # the frame itself: nothing was read to draw on it
            self._last_reading = None
            self.table.camera_read_failed(f"the dice could not be read ({type(error).__name__}); "
                                            "throw again or enter them by hand")
            return
        self._show(self._annotate(image, reading))
        repeated = same_throw(self._last_reading, reading)
        self._last_reading = reading
        self.table.camera_reading(reading, repeated=repeated)

    def _show(self, picture: np.ndarray) -> None:
        """The last throw's picture: served as the still, and in the preview at once until dice move."""
        still = encode_jpeg(picture, STILL_QUALITY)
        with self._still_lock:
            self._still = still
        self._shown_throw = picture
        self._last_preview = None

    def _send_preview(self, frame: Any) -> None:
        now = frame.timestamp
        if self._last_preview is not None and now - self._last_preview < self._preview_period:
            return
        self._last_preview = now
        picture = self._shown_throw if self._shown_throw is not None else frame.image
        version, _ = self.preview.latest()
        self.preview.publish(version + 1, encode_jpeg(picture, PREVIEW_QUALITY, PREVIEW_WIDTH))

    # --- camera status (called on the supervisor's thread) -------------------------------------------

    def _camera_changed(self, feed: CameraFeed) -> None:
        live = feed.state is CameraState.LIVE
        if live:
            self._restart_detector.set()
        else:
            self._shown_throw = None
        # A live camera's message is its name, which is the source the tablet shows.
        self.table.camera_changed(feed.state, None if live else feed.message, feed.message if live else None)
