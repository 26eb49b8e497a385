"""One camera interface for every source: Pi camera, USB webcam or stream, replayed images, a test fake.

A source is chosen by a string that the CLI and the configuration both accept:

    auto            the Pi camera, else webcam 0; with neither, no camera (and both are tried again)
    pi              the Raspberry Pi camera (picamera2)
    usb:N           webcam number N (cv2.VideoCapture)
    /dev/video2     a device path, or rtsp://... / http://... a stream URL
    replay:PATH     a folder of images or a video file, looped at a set frame rate
    demo            the sample throws that come with Yacht Table, one each time a throw is asked for
    off             no camera: every roll is entered on the tablet

A replay is only ever what was asked for by name: a table whose camera is missing must not score
sample pictures as the players' throws.
"""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .frames import (
    DEFAULT_READ_TIMEOUT,
    BackgroundCamera,
    Camera,
    CameraDisconnected,
    CameraError,
    CameraTimeout,
    CameraUnavailable,
    Frame,
    camera_picture,
)

__all__ = [
    "DEFAULT_READ_TIMEOUT", "Camera", "CameraDisconnected", "CameraError", "CameraTimeout",
    "CameraUnavailable", "Frame", "ReplayCamera", "SourceSpec", "VideoCaptureCamera", "demo_samples_dir",
    "list_images", "open_camera", "parse_source", "read_sequence",
]

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff")
# A checkout (or an editable install) has the samples beside the packages; an installed copy has
# them as the package data of `yacht_table_samples`.
CHECKOUT_SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SAMPLES_PACKAGE = "yacht_table_samples"
log = logging.getLogger(__name__)
DICE_PER_THROW = 5  # a demo throw's dice when none are held


def demo_samples_dir() -> Path:
    """The folder of sample throws that `demo` replays, or CameraUnavailable saying how to get it."""
    if (CHECKOUT_SAMPLES / "images").is_dir():
        return CHECKOUT_SAMPLES
    # A folder of data, not code: found by its place on the import path rather than imported.
    spec = importlib.util.find_spec(SAMPLES_PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        if (Path(folder) / "images").is_dir():
            return Path(folder)
    raise CameraUnavailable(
        "the demo's sample throws are not installed here; clone the Yacht Table repository and "
        "run `yacht-table serve --camera replay:PATH/samples`")


class _Pacer:
    """Hands out frame times at a fixed rate, sleeping until each one is due."""

    def __init__(self, fps: float, clock: Callable[[], float], sleep: Callable[[float], None]):
        self.period = 1.0 / fps
        self.clock = clock
        self.sleep = sleep
        self.next_due: float | None = None

    def wait(self, timeout: float) -> float:
        now = self.clock()
        if self.next_due is None or self.next_due < now - self.period:
            # first frame, or the reader fell behind: restart the schedule rather than burst
            self.next_due = now
        delay = self.next_due - now
        if delay > timeout:
            self.sleep(timeout)
            raise CameraTimeout(f"next replay frame is due in {delay:.2f} s, later than the {timeout} s timeout")
        if delay > 0:
            self.sleep(delay)
        due = self.next_due
        self.next_due += self.period
        return due


SEQUENCE_FILE = "sequence.json"


def list_images(folder: Path) -> list[Path]:
    """Still images under `folder`, in path order. Throw sequences (folders with a sequence.json)
    are left out: their frames only make sense played on their own, at their own rate."""
    sequences = [p.parent for p in folder.rglob(SEQUENCE_FILE)]
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES
                  and not any(p.is_relative_to(sequence) for sequence in sequences))


def read_sequence(folder: Path) -> tuple[list[Path], float]:
    """The frames and frame rate of a throw sequence: `frames` (file names in order) and `fps` in
    its sequence.json, as written by vision.synth.write_sequences."""
    description_path = folder / SEQUENCE_FILE
    try:
        description = json.loads(description_path.read_text(encoding="utf-8"))
        frames = [folder / name for name in description["frames"]]
        fps = float(description["fps"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise CameraUnavailable(f"cannot use sequence {description_path}: {type(error).__name__}: {error}") from None
    missing = [frame.name for frame in frames if not frame.is_file()]
    if missing or not frames or fps <= 0:
        problem = f"missing frames {', '.join(missing[:3])}" if missing else "no frames or a frame rate of 0"
        raise CameraUnavailable(f"cannot use sequence {description_path}: {problem}")
    return frames, fps


class ThrowRequests:
    """How many throws have been asked of a demo camera (the tablet's Throw button, the table's
    button), and of how many dice the last one is: shared by the camera the supervisor opens and
    whoever asks, across reopenings."""

    def __init__(self) -> None:
        self._count = 0
        self._dice = DICE_PER_THROW
        self._lock = threading.Lock()

    def request(self, dice: int = DICE_PER_THROW) -> None:
        """Ask for a throw of `dice` dice: fewer than five while the others are held (0: all held)."""
        with self._lock:
            self._count += 1
            self._dice = dice

    @property
    def count(self) -> int:
        with self._lock:
            return self._count

    def latest(self) -> tuple[int, int]:
        """The number of throws asked so far, and how many dice the last one is of."""
        with self._lock:
            return self._count, self._dice


class ReplayCamera(Camera):
    """Replays a folder of images (each held for `hold` frames) or a video file, looping, at `fps`.

    Holding each still picture for several frames makes a folder of single throws look like real
    play to the table loop: the change of picture is the movement, the repeats are the dice at rest.
    A throw sequence folder (with a sequence.json) plays its frames in order at its own frame rate,
    the moving-then-still throw as it was recorded; `fps` and `hold` do not apply to it.

    With `throws` (a folder of images), a picture is a throw made only when asked: before the first
    request an empty tray is shown, then the next picture at each request, held until the next. A
    request of fewer dice (the others held) shows the next of `fewer[dice]`, the pictures of that
    many dice, so the held dice stay out of the throw as a player's would.
    """

    def __init__(self, path: str | Path, *, fps: float = 4.0, hold: int = 1, loop: bool = True,
                 throws: ThrowRequests | None = None, images: Sequence[Path] | None = None,
                 fewer: Mapping[int, Sequence[Path]] | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
        if fps <= 0:
            raise ValueError(f"replay fps must be above 0, got {fps}")
        if hold < 1:
            raise ValueError(f"replay hold must be at least 1 frame, got {hold}")
        self.path = Path(path).expanduser()
        self.source = f"replay:{path}"
        self.name = f"replay of {self.path.name or self.path}"
        self.loop = loop
        self._index = 0
        self._video: Any = None  # a cv2.VideoCapture for a video file
        self._held: np.ndarray | None = None
        self._images: list[Path] = []
        if (self.path / SEQUENCE_FILE).is_file():
            self._images, fps = read_sequence(self.path)
            hold = 1
        elif self.path.is_dir():
            self._images = list(images) if images is not None else list_images(self.path)
            if not self._images:
                raise CameraUnavailable(f"no images ({', '.join(IMAGE_SUFFIXES)}) in {self.path}")
        elif self.path.is_file():
            self._video = _open_video_file(self.path)
        else:
            raise CameraUnavailable(f"replay path {self.path} does not exist")
        if throws is not None and (self._video is not None or (self.path / SEQUENCE_FILE).is_file()):
            raise CameraUnavailable(f"{self.path} is no folder of pictures to throw one at a time")
        self.throws = throws
        self._fewer = {dice: list(pictures) for dice, pictures in (fewer or {}).items()}
        self._fewer_shown: tuple[int, np.ndarray] | None = None  # a throw of fewer dice: its number, its picture
        self._fewer_thrown = 0
        self._empty_tray: np.ndarray | None = None
        self.hold = hold
        self.fps = fps
        self._pacer = _Pacer(fps, clock, sleep)
        self._closed = False

    @property
    def image_count(self) -> int | None:
        return len(self._images) if self._video is None else None

    def read(self, timeout: float = DEFAULT_READ_TIMEOUT) -> Frame:
        if self._closed:
            raise CameraDisconnected(f"{self.name} is closed")
        position = self._index // self.hold
        if self.throws is not None:
            image = self._thrown_image(*self.throws.latest())
        elif self._video is None:
            if position >= len(self._images) and not self.loop:
                raise CameraDisconnected(f"{self.name} reached its last image")
            image = self._readable_image(position)
        else:
            image = self._next_video_image()
        timestamp = self._pacer.wait(timeout)
        frame = Frame(image=image, timestamp=timestamp, index=self._index)
        self._index += 1
        return frame

    def _thrown_image(self, throws: int, dice: int) -> np.ndarray:
        if throws == 0 or dice == 0:  # nothing thrown yet, or every die held
            if self._empty_tray is None:
                self._empty_tray = empty_tray_like(self._readable_image(0))
            return self._empty_tray
        if self._fewer.get(dice):
            if self._fewer_shown is None or self._fewer_shown[0] != throws:
                try:
                    picture = self._readable_image(self._fewer_thrown, self._fewer[dice])
                except CameraError:  # none of that many dice left: a throw of five still plays
                    return self._readable_image(throws - 1)
                self._fewer_thrown += 1
                self._fewer_shown = (throws, picture)
            return self._fewer_shown[1]
        return self._readable_image(throws - 1)

    def _readable_image(self, position: int, images: list[Path] | None = None) -> np.ndarray:
        """The picture at `position` (counted round `images`, by default all of them), skipping for
        good, and saying which, any file that cannot be read, so one bad file never stops the
        pictures after it; CameraError once none is left."""
        images = self._images if images is None else images
        while True:
            if not images:
                raise CameraError(f"no picture left to replay in {self.path}")
            path = images[position % len(images)]
            try:
                return self._load_image(path)
            except CameraError as error:
                images.remove(path)
                if not images:
                    raise CameraError(f"no picture left to replay in {self.path}: {error}") from None
                log.warning("%s: skipping %s: %s", self.name, path.name, error)

    def _load_image(self, path: Path) -> np.ndarray:
        import cv2

        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:
            raise CameraError(f"cannot read image {path} (missing or not a picture)")
        return camera_picture(image, str(path))

    def _next_video_image(self) -> np.ndarray:
        import cv2

        if self._index % self.hold and self._held is not None:
            return self._held
        ok, image = self._video.read()
        if not ok:
            if not self.loop:
                raise CameraDisconnected(f"{self.name} reached the end of the video")
            self._video.set(cv2.CAP_PROP_POS_FRAMES, 0)
            ok, image = self._video.read()
            if not ok:
                raise CameraError(f"cannot decode any frame of {self.path}")
        held = self._held = camera_picture(image, str(self.path))
        return held

    def close(self) -> None:
        self._closed = True
        if self._video is not None:
            self._video.release()


def demo_throw_images(folder: Path, dice: int = DICE_PER_THROW) -> list[Path]:
    """The samples whose manifest.csv says `dice` dice, read surely (without a manifest, every image
    for five dice and none for fewer)."""
    manifest = folder / "manifest.csv"
    if not manifest.is_file():
        return list_images(folder) if dice == DICE_PER_THROW else []
    with manifest.open(newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    fair = {row["image"] for row in rows if row["status"] == "ok" and len(row["values"].split("-")) == dice}
    return [path for path in list_images(folder) if path.name in fair]


def empty_tray_like(picture: np.ndarray) -> np.ndarray:
    """A generated tray with no dice, the size of `picture`: what a demo shows before its first throw."""
    from vision.synth import random_scene, render

    height, width = picture.shape[:2]
    return render(random_scene(0, size=(width, height), dice_count=0))


def _open_video_file(path: Path):
    import cv2

    video = cv2.VideoCapture(str(path))
    if not video.isOpened():
        raise CameraUnavailable(f"cannot open video file {path} (unknown format or damaged)")
    return video


class VideoCaptureCamera(BackgroundCamera):
    """A webcam, device path or stream URL through cv2.VideoCapture."""

    def __init__(self, target: int | str, *, width: int | None = None, height: int | None = None,
                 source: str | None = None):
        import cv2

        self.source = source or (f"usb:{target}" if isinstance(target, int) else str(target))
        self.name = f"webcam {target}" if isinstance(target, int) else str(target)
        self._capture = cv2.VideoCapture(target)
        if not self._capture.isOpened():
            self._capture.release()
            raise CameraUnavailable(f"cannot open {self.name} (not connected, or in use by another program)")
        if width and height:
            self._capture.set(cv2.CAP_PROP_FRAME_WIDTH, width)
            self._capture.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        self._start_grabbing()

    def _grab(self) -> np.ndarray:
        ok, image = self._capture.read()
        if not ok:
            raise CameraDisconnected(f"{self.name} stopped sending pictures (unplugged or stream ended)")
        return image

    def _release(self) -> None:
        self._capture.release()


@dataclass(frozen=True)
class SourceSpec:
    """A parsed source string: kind is 'auto', 'pi', 'usb', 'device', 'url', 'replay', 'demo' or 'off'."""

    kind: str
    target: str | int | None = None


def parse_source(text: str) -> SourceSpec:
    """Check a source string without opening anything; ValueError says what is accepted."""
    value = text.strip()
    if value in ("pi", "auto", "demo", "off"):
        return SourceSpec(value)
    if value.startswith("usb:"):
        number = value[4:]
        if not number.isdigit():
            raise ValueError(f"camera source {text!r}: usb:N needs a webcam number, e.g. usb:0")
        return SourceSpec("usb", int(number))
    if value.startswith("replay:"):
        path = value[7:]
        if not path:
            raise ValueError(f"camera source {text!r}: replay:PATH needs a folder of images or a video file")
        return SourceSpec("replay", path)
    if "://" in value:
        return SourceSpec("url", value)
    if value.startswith("/dev/"):
        return SourceSpec("device", value)
    raise ValueError(
        f"unknown camera source {text!r}: use auto, pi, usb:N, a device path such as /dev/video0, "
        "a stream URL, replay:PATH, demo or off"
    )


def open_camera(source: str, **options) -> Camera:
    """Open the source named by `source`. Options: width, height (pi, usb), fps, hold (replay),
    and the Pi camera's settings (see hardware.picamera.PiCameraSettings fields). `off` is no
    source to open: the caller runs without a camera."""
    spec = parse_source(source)
    unknown = set(options) - _KNOWN_OPTIONS
    if unknown:
        raise TypeError(f"unknown camera option(s) {', '.join(sorted(unknown))}")
    if spec.kind == "off":
        raise CameraUnavailable("the camera is off (camera = \"off\")")
    if spec.kind == "auto":
        return _open_auto(options)
    if spec.kind == "pi":
        from .picamera import open_pi_camera

        return open_pi_camera(**_pick(options, _PI_OPTIONS))
    if spec.kind in ("usb", "device", "url") and spec.target is not None:
        with _opencv_quiet():
            return VideoCaptureCamera(spec.target, source=source, **_pick(options, ("width", "height")))
    if spec.kind == "demo":
        folder = demo_samples_dir()
        # Thrown one at a time, each sample is a throw a player could make: all its dice readable.
        images, fewer = None, None
        if options.get("throws") is not None:
            images = demo_throw_images(folder)
            fewer = {dice: demo_throw_images(folder, dice) for dice in range(1, DICE_PER_THROW)}
        camera = ReplayCamera(folder, images=images, fewer=fewer,
                              **_pick(options, ("fps", "hold", "loop", "throws")))
        camera.source, camera.name = "demo", f"demo: a replay of {camera.image_count} sample throws"
        return camera
    assert spec.kind == "replay" and isinstance(spec.target, str)
    return ReplayCamera(spec.target, **_pick(options, ("fps", "hold", "loop")))


_PI_OPTIONS = ("width", "height", "swap_red_blue", "ae_settle_seconds", "exposure_time_us", "analogue_gain",
               "colour_gains", "flicker_hz", "lens_position")
_KNOWN_OPTIONS = {*_PI_OPTIONS, "fps", "hold", "loop", "throws"}


@contextlib.contextmanager
def _opencv_quiet() -> Iterator[None]:
    """OpenCV warns on stderr about every webcam it cannot open. A missing camera is tried again every
    few seconds and the table says why itself: the table's log is not filled with those warnings."""
    import cv2

    opencv_log = getattr(getattr(cv2, "utils", None), "logging", None)
    if opencv_log is None:
        yield
        return
    level = opencv_log.getLogLevel()
    opencv_log.setLogLevel(opencv_log.LOG_LEVEL_ERROR)
    try:
        yield
    finally:
        opencv_log.setLogLevel(level)


def _pick(options: dict, names: Sequence[str]) -> dict:
    return {name: options[name] for name in names if options.get(name) is not None}


AUTO_SOURCES = ("pi", "usb:0")


def _open_auto(options: dict) -> Camera:
    """The Pi camera, else webcam 0, else CameraUnavailable with every reason: the supervisor then
    shows the table without a camera and tries both again."""
    reasons = []
    for source in AUTO_SOURCES:
        try:
            return open_camera(source, **options)
        except CameraUnavailable as error:
            reasons.append(f"{source}: {error}")
    raise CameraUnavailable("no camera found (enter the dice on the tablet); " + "; ".join(reasons))
