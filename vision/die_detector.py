"""A small learned detector that finds dice in a frame: the centre and size of each top face.

The frame is scaled so its longer side is DETECT_SIDE pixels and goes through one forward pass of a
fully convolutional network (vision/models/die_detector.onnx, run by ONNX Runtime). For every cell of 8x8
input pixels the network gives:
- four "a die's centre is here" scores, one per 4x4 quarter of the cell, so centres are placed on a
  grid of 4 px although the network only computes at 8 px (dice touching each other stay apart);
- the log of the die's size: the side of the upright square round its top face, as in labelImg boxes;
- "something neither die nor tray covers this cell": a hand reaching in, an arm, a cup.
Peaks of the centre score are the dice. A die is found whatever its colour, the tray's, or the light,
because the network learnt dice from photographs and generated pictures rather than from a colour rule.

The model is trained by tools/train_die_detector.py; torch is needed only there.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from .imaging import shrink
from .onnx_network import OnnxNetwork

MODEL_PATH = Path(__file__).resolve().parent / "models" / "die_detector.onnx"
# Dice of a Yacht tray seen by a Pi camera, and the small dice of the photo sets, are 10 to 50 px
# across at this scale: large enough to see, small enough to run fast.
DETECT_SIDE = 320
STRIDE = 8
HEAT_STRIDE = 4
OUTPUT_CHANNELS = 6
# The size channel holds log(size / SIZE_UNIT), size in input pixels.
SIZE_UNIT = 16.0
# Peak scores: from SURE up a peak is taken for a die; from CANDIDATE up it may be one, and the reader
# looks at its face to decide. Chosen on the byler-d6 train split and samples/, where almost every die
# scores SURE or more and no die less than CANDIDATE.
SURE = 0.55
CANDIDATE = 0.3
# From DIM up a peak is reported apart (Sight.dim): the first look sees some dice only dimly (a blue die
# touching a black one, a green die on a blue tray: 0.25 to 0.29), and much that is no die (specks,
# photo noise, tray corners) as dimly. The reader takes one only where it reads a die's face there.
DIM = 0.2
# A cell whose "foreign" score reaches this holds something that is neither die nor floor. It was
# learnt from generated hands only and also fires on real wood grain and table tops, so the reader takes
# it only as a hint that a die too large for the first look shows its edges there (COARSER below).
FOREIGN = 0.2
# Dice larger than the network learnt (about 52 px where it looks) show as their pips instead, each a
# die showing one; so the frame is also looked at 2 and 4 times smaller, where a die as wide as a
# third, or two thirds, of the frame is in range. There, only dice larger than LARGE px at
# DETECT_SIDE count: the smaller ones the first look sees better. Those looks are taken only when the
# first shows a sign of a die too large for it: something that is no die (a large die's edges), no
# die found surely, or a peak of at least LARGE_HINT px (a large die's pips, found as dice, are up to
# half its size). Most frames of a table camera show none, and are spared those looks.
COARSER = (2, 4)
LARGE = 40.0
LARGE_HINT = 30.0
# A die is never most of the frame across (its upright square at most this share of the frame's shorter
# side): what a coarser look finds larger is the tray itself, a bowl or a board, and a round bowl with
# two dice in it reads as a two (renders b7: 0.89). The largest die found so in any photo source is
# 0.27 of it, in the tests' drawn frames 0.73.
LARGEST_SHARE = 0.8
# Dice smaller than the network learnt (about 9 px where it looks: a die a 35th of the frame wide, as
# a camera seeing far more than the tray gives) are missed or misplaced; so while the last look finds
# no die surely, or its sure dice are smaller than SMALL px there, the frame is looked at again FINER
# times larger (from the full frame, never beyond it) and a look that finds more dice surely is kept.
# Not always: each costs four times the one before, and at a die's usual size it finds things that are
# no dice; and a look finding nothing, not even faintly, is the last. Twice and four times: a die a
# 70th of a 2560 px frame wide is 9 px at 640, 18 at 1280.
FINER = (2, 4)
SMALL = 12.0


@dataclass(frozen=True)
class Detection:
    """One die found, in frame pixels. `size` is the side of the upright square round its top face:
    the face's own side when it lies square to the frame, up to 1.41 times that turned 45 degrees."""

    x: float
    y: float
    size: float
    score: float

    @property
    def box(self) -> tuple[tuple[float, float], tuple[float, float], float]:
        """The upright square round the top face, ((cx, cy), (w, h), angle) as cv2.minAreaRect gives it."""
        return ((self.x, self.y), (self.size, self.size), 0.0)


def input_scale(width: int, height: int, side: int = DETECT_SIDE) -> float:
    return side / max(width, height)


def normalise(image: np.ndarray) -> np.ndarray:
    """uint8 BGR (H, W, 3) to the network's float32 (1, 3, H, W), standardised over the whole picture so
    a dim or bright exposure looks alike."""
    means, deviations = cv2.meanStdDev(image)
    mean = float(means.mean())
    # The spread of all three channels together, from each channel's mean and spread.
    spread = math.sqrt(max(float((deviations ** 2 + means ** 2).mean()) - mean * mean, 0.0))
    return cv2.dnn.blobFromImage(image, 1.0 / max(spread, 8.0), mean=(mean, mean, mean), swapRB=False)


def scaled_down(frame: np.ndarray, side: int) -> tuple[np.ndarray, float]:
    """The frame shrunk so its longer side is `side` pixels, and the scale."""
    height, width = frame.shape[:2]
    scale = input_scale(width, height, side)
    return shrink(frame, max(round(width * scale), STRIDE), max(round(height * scale), STRIDE)), scale


def padded_input(small: np.ndarray) -> np.ndarray:
    """A shrunk frame padded (edge pixels repeated) to a multiple of STRIDE, as the network's blob."""
    pad_h, pad_w = -small.shape[0] % STRIDE, -small.shape[1] % STRIDE
    if pad_w or pad_h:
        small = cv2.copyMakeBorder(small, 0, pad_h, 0, pad_w, cv2.BORDER_REPLICATE)
    return normalise(small)


def centre_heat(output: np.ndarray) -> np.ndarray:
    """The four per-cell centre logits (4, h, w) laid out as one (2h, 2w) probability map."""
    quarters, height, width = output.shape
    logits = output.reshape(2, 2, height, width).transpose(2, 0, 3, 1).reshape(2 * height, 2 * width)
    return 1.0 / (1.0 + np.exp(-logits))


@dataclass(frozen=True)
class Sight:
    """What the detector saw in one frame."""

    dice: list[Detection]  # strongest first, one per die
    foreign: list[tuple[float, float]]  # centres of the cells something else covers (a hand), frame pixels
    # Surely dice where the frame was looked at COARSER times smaller, and larger than LARGE where the
    # network looks first: dice too large for that first look, or else something shaped like a die
    # at that scale (two dice on a dark tray are a two). The reader decides which, from the face.
    large: list[Detection] = field(default_factory=list)
    # Peaks of the first look from DIM to below CANDIDATE, each away from the dice: perhaps a die.
    dim: list[Detection] = field(default_factory=list)


def decode(output: np.ndarray, threshold: float = CANDIDATE) -> list[Detection]:
    """Detections in network-input pixels from one (6, h, w) output; peaks below `threshold` are dropped."""
    heat = centre_heat(output[:4])
    rows, columns = np.nonzero((heat >= threshold) & (heat >= cv2.dilate(heat, np.ones((3, 3), np.uint8))))
    padded = np.pad(heat, 1)
    # Each peak's 3x3 window, (3, 3, peaks): the score-weighted mean of the window places the centre
    # between grid points.
    window = np.array([[padded[rows + dr, columns + dc] for dc in range(3)] for dr in range(3)])
    total = window.sum(axis=(0, 1))
    dy = (window[2].sum(axis=0) - window[0].sum(axis=0)) / total
    dx = (window[:, 2].sum(axis=0) - window[:, 0].sum(axis=0)) / total
    xs = (columns + 0.5 + dx) * HEAT_STRIDE
    ys = (rows + 0.5 + dy) * HEAT_STRIDE
    sizes = SIZE_UNIT * np.exp(np.clip(output[4, rows // 2, columns // 2], -4.0, 4.0))
    return [Detection(float(x), float(y), float(size), float(score))
            for x, y, size, score in zip(xs, ys, sizes, heat[rows, columns])]


class DieDetector:
    """Finds dice with the ONNX model, loaded once on first use."""

    def __init__(self, model_path: Path | str = MODEL_PATH):
        self.network = OnnxNetwork(model_path, "die detector")

    def raw_output(self, blob: np.ndarray) -> np.ndarray:
        """The (6, rows, columns) output for one frame's blob from padded_input."""
        return self.network.forward(blob)[0]

    def look(self, frame: np.ndarray, threshold: float = CANDIDATE) -> Sight:
        """Every die (peak) scoring at least `threshold` (of the finer look when dice are small),
        whatever else is in the tray, the large die-like things of the coarser looks, and the first
        look's dim peaks away from them, in frame pixels."""
        height, width = frame.shape[:2]
        small, scale = scaled_down(frame, DETECT_SIDE)
        output = self.raw_output(padded_input(small))
        rows, columns = np.nonzero(output[5] >= math.log(FOREIGN / (1.0 - FOREIGN)))
        foreign = [(x, y) for x, y in zip((columns + 0.5) * STRIDE / scale, (rows + 0.5) * STRIDE / scale)
                   if x < width and y < height]
        peaks = self._peaks(output, scale, width, height, min(threshold, DIM))
        dice = _one_per_die([spot for spot in peaks if spot.score >= threshold])
        dim = [spot for spot in _one_per_die(peaks) if spot.score < min(threshold, CANDIDATE)]
        peaks = [spot for spot in peaks if spot.score >= min(threshold, CANDIDATE)]
        sure = [spot.size * scale for spot in dice if spot.score >= SURE]
        hint = bool(foreign) or not sure or max(spot.size for spot in peaks) * scale >= LARGE_HINT
        looked_at, last_sure = DETECT_SIDE, sure
        for factor in FINER:
            side = min(factor * DETECT_SIDE, max(width, height))
            if (last_sure and float(np.median(last_sure)) >= SMALL) or side <= looked_at:
                break
            looked_at = side
            fine, fine_scale = scaled_down(frame, side)
            finer = _one_per_die(self._peaks(self.raw_output(padded_input(fine)), fine_scale, width, height, threshold))
            last_sure = [spot.size * fine_scale for spot in finer if spot.score >= SURE]
            if len(last_sure) > len(sure):
                dice, sure = finer, last_sure
            if not finer:
                break  # an empty tray: nothing even faint to look closer at
        large = []
        for factor in COARSER if hint else ():
            coarse, coarse_scale = scaled_down(small, DETECT_SIDE // factor)
            coarse_scale *= scale
            coarse_peaks = self._peaks(self.raw_output(padded_input(coarse)), coarse_scale, width, height, SURE)
            large += [spot for spot in coarse_peaks
                      if spot.size * scale >= LARGE and spot.size <= LARGEST_SHARE * min(width, height)]
        dim = [spot for spot in dim if not any(_same_die(spot, die) for die in dice)]
        return Sight(dice, [(float(x), float(y)) for x, y in foreign], _one_per_die(large), dim)

    @staticmethod
    def _peaks(output: np.ndarray, scale: float, width: int, height: int, threshold: float) -> list[Detection]:
        """The peaks of one look, in frame pixels, those on the padding left out."""
        if output[:4].max() < math.log(threshold / (1.0 - threshold)):
            return []  # no peak at all: the usual case of a coarser look, spared the decoding
        found = []
        for spot in decode(output, threshold):
            x, y = spot.x / scale, spot.y / scale
            if x < width and y < height:
                found.append(Detection(x, y, spot.size / scale, spot.score))
        return found


def _one_per_die(found: list[Detection]) -> list[Detection]:
    """The detections strongest first, without the same die scored twice."""
    kept: list[Detection] = []
    for spot in sorted(found, key=lambda d: -d.score):
        if not any(_same_die(spot, die) for die in kept):
            kept.append(spot)
    return kept


def _same_die(spot: Detection, die: Detection) -> bool:
    """Two dice lying flat cannot have centres closer than about a side (at least 0.7 of the upright
    square round a face): a second peak that near is the same die scored twice."""
    return math.dist((spot.x, spot.y), (die.x, die.y)) < 0.45 * min(spot.size, die.size)


@functools.cache
def default_detector() -> DieDetector:
    """The shared detector for the packaged model (the network itself loads on first use)."""
    return DieDetector()
