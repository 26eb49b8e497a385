"""When have the dice come to rest? Fed every camera frame, it says so once per throw.

The detector works on a small grey copy of each frame (a few thousand pixels, cheap on a Pi) and
measures change against the camera's own noise, estimated from the frames themselves, so one set of
settings serves a noisy webcam and a clean Pi camera alike. A scene is reported when nothing has moved
for `still_seconds`, unless a hand or arm is in view (a large changed region reaching the picture
edge, compared with the last reported scene) or the scene is the one already reported (a hand came
and went without moving a die). It re-arms as soon as anything moves again. A change over most of the
picture (a lamp switched on, the camera knocked) is taken for a new scene, not for a hand.

The frame it hands over to be read is the mean of the frames since the dice stopped: the camera's
noise, which costs small dice in a dim room their reading, falls with the square root of their count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import cv2
import numpy as np

from vision.imaging import halve

State = Literal["moving", "settling", "settled", "hand"]

SCENE_CHANGE = 0.5  # fraction of the picture
# The still frames summed in 16 bits: 256 of them fit (256 * 255 < 65536).
MOST_FRAMES_AVERAGED = 256


@dataclass(frozen=True)
class SettleEvent:
    """The dice came to rest: `frame` is the one to read, the mean of the frames given to `update` from
    the first after the last motion to the one taken at `t`."""

    t: float
    still_since: float
    frame: np.ndarray


class SettleDetector:
    """Feed successive frames with their times; `update` returns a SettleEvent once per resting scene.

    still_seconds: how long nothing may move before the scene counts as settled.
    width: width of the grey copy the measurements use.
    noise_factor: a pixel has changed when it differs by more than this many noise levels.
    min_changed: the fraction of pixels that must change before the scene counts as moving.
    hand_area: a changed region touching the picture edge and larger than this fraction of the
        picture is taken for a hand or arm.
    """

    def __init__(self, still_seconds: float = 0.3, width: int = 160, noise_factor: float = 6.0,
                 min_changed: float = 0.0005, hand_area: float = 0.02) -> None:
        if still_seconds < 0:
            raise ValueError(f"still_seconds must be 0 or more, got {still_seconds}")
        if width < 16:
            raise ValueError(f"width must be at least 16 pixels, got {width}")
        if noise_factor <= 0 or not 0 < min_changed < 1 or not 0 < hand_area < 1:
            raise ValueError("noise_factor must be positive; min_changed and hand_area within 0..1")
        self.still_seconds = still_seconds
        self.width = width
        self.noise_factor = noise_factor
        self.min_changed = min_changed
        self.hand_area = hand_area
        self.state: State = "moving"
        self.noise: float | None = None
        self._previous: np.ndarray | None = None
        self._still_start: np.ndarray | None = None
        self._still_since = 0.0
        self._still_sum: np.ndarray | None = None  # the full frames since the scene went still, added up
        self._still_count = 0
        self._last_t: float | None = None
        self._background: np.ndarray | None = None  # the last reported scene, else the first frame
        self._reported_once = False

    def update(self, frame: np.ndarray, t: float) -> SettleEvent | None:
        """Take the next frame (BGR or grey) and its time in seconds; times must not go backwards."""
        if self._last_t is not None and t < self._last_t:
            raise ValueError(f"frame time {t} is before the previous frame's {self._last_t}")
        small = self._shrink(frame)
        if self._previous is not None and small.shape != self._previous.shape:
            raise ValueError(f"frame size changed from {self._previous.shape} to {small.shape} (scaled)")
        self._last_t = t
        if self._previous is None:
            self._previous = small
            self._background = small
            self._start_still(small, t)
            return None
        step = self._difference(small, self._previous)
        self._learn_noise(step)
        self._previous = small
        moved = self._moved(step)
        # a die creeping a little each frame slips under the frame-to-frame test but not this one
        crept = (self.state != "settled" and self._still_start is not None
                 and self._moved(self._difference(small, self._still_start)))
        if moved or crept:
            self.state = "moving"
            self._start_still(small, t)
            return None
        if self.state != "settled":
            self._add_still(frame)
        # the 1e-6 because 2.9 - 2.6 < 0.3 in floating point
        if self.state == "settled" or t - self._still_since < self.still_seconds - 1e-6:
            if self.state != "settled":
                self.state = "settling"
            return None
        assert self._background is not None  # set with the first frame
        since_report = self._difference(small, self._background)
        changed = self._changed(since_report)
        # a change over most of the view is new light or a moved camera, not an arm: a new scene
        if changed.mean() < SCENE_CHANGE and self._hand_in_view(changed):
            self.state = "hand"
            return None
        self.state = "settled"
        if self._reported_once and not self._moved(since_report):
            return None  # the scene already reported: a hand came and went and moved nothing
        self._background = small
        self._reported_once = True
        return SettleEvent(t=t, still_since=self._still_since, frame=self.frame_to_read(frame))

    def _start_still(self, small: np.ndarray, t: float) -> None:
        # The frame that moved is not summed: the dice may have been moving while it was exposed.
        self._still_start = small
        self._still_since = t
        self._still_sum = None
        self._still_count = 0

    def _add_still(self, frame: np.ndarray) -> None:
        if self._still_sum is None or self._still_sum.shape != frame.shape:
            self._still_sum, self._still_count = frame.astype(np.uint16), 1
        elif self._still_count < MOST_FRAMES_AVERAGED:
            cv2.add(self._still_sum, frame, dst=self._still_sum, dtype=cv2.CV_16U)
            self._still_count += 1

    def frame_to_read(self, latest: np.ndarray) -> np.ndarray:
        """The frame to read now, settled or not (a SettleEvent's, and the table's button): the mean of
        the frames since the dice last moved, rounded to 8 bits; `latest`, the frame last given to
        `update`, when it is the only one or they moved in it."""
        if self._still_sum is None or self._still_count < 2:
            return latest
        return cv2.convertScaleAbs(self._still_sum, alpha=1.0 / self._still_count)

    def _shrink(self, frame: np.ndarray) -> np.ndarray:
        if frame.ndim not in (2, 3) or frame.shape[0] < 2 or frame.shape[1] < 2:
            raise ValueError(f"expected an image array (height, width[, channels]), got shape {frame.shape}")
        height = max(int(round(frame.shape[0] * self.width / frame.shape[1])), 1)
        # Halved in 8 bits (an odd factor in one go costs several times more on a 2304-wide frame);
        # the last step is in floats so the averaged noise keeps its fractions, which the noise
        # estimate needs.
        frame = halve(frame, 2 * self.width, 2 * height)
        grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
        return cv2.resize(grey.astype(np.float32), (self.width, height), interpolation=cv2.INTER_AREA)

    @staticmethod
    def _difference(current: np.ndarray, reference: np.ndarray) -> np.ndarray:
        """What changed, with any change of exposure taken out: current - (gain * reference + offset),
        gain and offset fitted to the pixels that did not move. (Normalising each frame on its own by
        its mean or median fails: dice landing shift those statistics, and the rescaled table round
        the tray then looks like an arm.)"""
        # every fifth pixel is plenty for two numbers, and this runs on every frame
        x = reference.ravel()[::5]
        y = current.ravel()[::5]
        gain, offset = _line_through(x, y)
        # refit without what moved: it stands out of the first fit, made while it still counted. A
        # second refit: when many dice moved (all five taken away, three thrown elsewhere), the first
        # fit is far enough off to keep bright dice as still and leave a gain error at the tray's edge.
        for _refit in range(2):
            residual = y - (gain * x + offset)
            away = np.abs(residual - _quantile(residual, 0.5))
            still = away <= 3 * 1.4826 * _quantile(away, 0.5) + 0.5
            gain, offset = _line_through(x[still], y[still])
        return current - (gain * reference + offset)

    def _learn_noise(self, step: np.ndarray) -> None:
        # Both estimates of the noise sigma ignore the few moving pixels: 1.4826 * the median absolute
        # difference, and the 90th percentile / 1.645 for when JPEG has flattened most pixels to no
        # change at all and the noise lives in the tail. Learning only from quiet frames keeps a hand
        # filling the view from inflating it.
        sample = np.abs(step.ravel()[::3])
        level = max(1.4826 * _quantile(sample, 0.5), _quantile(sample, 0.9) / 1.645, 0.25)
        if self.noise is None:
            self.noise = level
        elif not self._moved(step) or level < self.noise:
            self.noise = 0.9 * self.noise + 0.1 * level

    def _changed(self, difference: np.ndarray) -> np.ndarray:
        return np.abs(difference) > self.noise_factor * (self.noise or 0.25)

    def _moved(self, difference: np.ndarray) -> bool:
        # noise and JPEG ringing along edges flip single pixels; anything that moved changes a patch
        patches = cv2.erode(self._changed(difference).astype(np.uint8), np.ones((2, 2), np.uint8))
        return float(patches.mean()) > self.min_changed

    def _hand_in_view(self, changed: np.ndarray) -> bool:
        # opening first: scattered noise must not join up into an arm-sized region
        square = np.ones((3, 3), np.uint8)
        mask = cv2.dilate(cv2.erode(changed.astype(np.uint8), square), square, iterations=2)
        count, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        height, width = mask.shape
        for label in range(1, count):
            x, y, w, h, area = stats[label]
            at_edge = x == 0 or y == 0 or x + w == width or y + h == height
            if at_edge and area > self.hand_area * mask.size:
                return True
        return False


def _line_through(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares gain and offset taking x to y; a plain shift when x is too flat to show a gain."""
    if x.size < 2:
        return 1.0, 0.0
    spread = float(x.var())
    if spread <= 1.0:
        return 1.0, _quantile(y - x, 0.5)
    gain = float(((x - x.mean()) * (y - y.mean())).mean()) / spread
    return gain, float(y.mean()) - gain * float(x.mean())


def _quantile(values: np.ndarray, fraction: float) -> float:
    """The value `fraction` of the way up the sorted values (no interpolation: cheaper than np.quantile)."""
    k = min(int(fraction * values.size), values.size - 1)
    return float(np.partition(values, k)[k])


def settled_frame(frames: Sequence[np.ndarray], fps: float = 10.0) -> np.ndarray:
    """What the detector hands over to be read from one still scene's frames in turn, the first being
    the one the dice last moved in: the mean of the others (for measuring the reader as the table runs
    it, on frames taken or rendered apart)."""
    if len(frames) < 2:
        raise ValueError(f"a still scene takes 2 frames or more, got {len(frames)}")
    detector = SettleDetector(still_seconds=(len(frames) - 1) / fps)
    events = [detector.update(frame, index / fps) for index, frame in enumerate(frames)]
    if events[-1] is None:
        raise ValueError(f"the {len(frames)} frames were not reported as one still scene (something moved)")
    return events[-1].frame
