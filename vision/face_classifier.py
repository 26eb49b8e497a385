"""A small learned classifier for the top face of one die, run by ONNX Runtime on crops of the frame.

The die finder hands the dice's boxes here; each box is warped to a small square, turned so the face's
edges run along the square's sides (the finder's angle may be rough or missing), and the whole batch
goes through one forward pass. Besides the six faces the network has a
seventh class, "not a die face" (tray, a die's side, two dice half in view, a logo), so the reader can
say unsure instead of guessing.

The model is trained by tools/train_face_classifier.py; torch and onnx are needed only there.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np

from .imaging import as_bgr, frame_window, shrink
from .onnx_network import OnnxNetwork


class FaceBox(NamedTuple):
    """A die's top face as a rotated rectangle in frame pixels, laid out as cv2.minAreaRect returns one,
    so OpenCV's box functions take it as it is."""

    centre: tuple[float, float]
    size: tuple[float, float]
    angle: float  # degrees


class Opinion(NamedTuple):
    """What the classifier says of one face: its value, or None for "not a die face", and the
    probability of that answer."""

    value: int | None
    confidence: float


RotatedBox = FaceBox | tuple[tuple[float, float], tuple[float, float], float]

CROP_SIZE = 32
# The crop reaches a little past the box so the die's edge, and so the face's extent, is visible even
# when the reader's box is tight or slightly small.
CROP_MARGIN = 1.3
FACE_VALUES = (1, 2, 3, 4, 5, 6)
NOT_A_FACE = len(FACE_VALUES)
CLASS_COUNT = NOT_A_FACE + 1
# The network as trained, in float32: training goes on from it, and the one the reader runs is made
# from it by tools/quantize_classifier.py, its middle layers in 8-bit integers: about twice as fast,
# with the trained network's answer on 99.3 % of the crops it was quantized on (docs/training.md).
TRAINED_PATH = Path(__file__).resolve().parent / "models" / "face_classifier.onnx"
MODEL_PATH = TRAINED_PATH.with_suffix(".int8.onnx")
# A face read below this probability is read again in its eight symmetric views (the four quarter
# turns, each also mirrored) and the eight answers averaged: a die's value is the same in all of
# them, the glint, the marbling or the pixel grid that misled the network is not. Only doubtful
# faces: averaging the views of a sure face can leave it unsure.
SECOND_LOOK_BELOW = 0.8

_SQRT2 = math.sqrt(2.0)


def _parse_box(box: RotatedBox) -> tuple[float, float, float, float]:
    try:
        (cx, cy), (w, h), angle = box
        cx, cy, w, h, angle = float(cx), float(cy), float(w), float(h), float(angle)
    except (TypeError, ValueError) as error:
        raise ValueError(f"a box must be ((cx, cy), (w, h), angle_deg), got {box!r}") from error
    if not all(math.isfinite(v) for v in (cx, cy, w, h, angle)):
        raise ValueError(f"a box must have finite numbers, got {box!r}")
    if w < 0 or h < 0:
        raise ValueError(f"a box must have a non-negative size, got {box!r}")
    return cx, cy, max(w, h, 1.0), angle


def crop_faces(
    image: np.ndarray,
    boxes: Sequence[RotatedBox],
    size: int = CROP_SIZE,
    margin: float = CROP_MARGIN,
) -> np.ndarray:
    """Warp each rotated box to an upright size x size BGR square; returns uint8 (N, size, size, 3).

    The square is centred on the box, its side is the box's longer side times `margin`, and it is turned
    so the box's edges are horizontal and vertical. Parts beyond the image edge repeat the edge pixels.
    """
    frame = as_bgr(image)
    crops = np.empty((len(boxes), size, size, 3), np.uint8)
    # A rotated square fits inside an upright one sqrt(2) larger. When the crop is smaller than the die,
    # that upright square is first shrunk with area averaging, so small pips are not aliased away.
    enclosing = int(math.ceil(size * _SQRT2)) | 1
    middle = (size - 1) / 2.0
    for index, box in enumerate(boxes):
        cx, cy, side, angle = _parse_box(box)
        span = side * margin
        if span <= size:
            source, centre, scale = frame, (cx, cy), size / span
        else:
            patch_px = int(math.ceil(span * _SQRT2)) + 1  # + 1: the whole-pixel window is up to half a pixel off
            patch, left, top = frame_window(frame, cx, cy, patch_px)
            source = shrink(patch, enclosing, enclosing)
            shrunk = enclosing / patch_px
            centre = ((cx - left + 0.5) * shrunk - 0.5, (cy - top + 0.5) * shrunk - 0.5)
            # `span` frame pixels must land on `size` crop pixels.
            scale = size / (span * shrunk)
        warp = cv2.getRotationMatrix2D(centre, angle, scale)
        warp[:, 2] += np.array((middle - centre[0], middle - centre[1]))
        crops[index] = cv2.warpAffine(
            source, warp, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
    return crops


def face_angle(crop: np.ndarray) -> float:
    """The turn in degrees (-45 to 45) that lines up the square pattern in a crop with the crop's sides.

    A die's outline and its grid of pips are square, so their edges run four ways a quarter turn apart.
    Raising each gradient, as a complex number, to the fourth power makes those four ways agree; the
    angle of the sum (weighted by edge strength) over four is the face's turn, whatever its value.
    """
    values = crop.astype(np.float32)
    across, down = cv2.Sobel(values, cv2.CV_32F, 1, 0), cv2.Sobel(values, cv2.CV_32F, 0, 1)
    # (across + i down)^4 / |across + i down|^2 in real float32 arithmetic: twice as fast as complex.
    real_squared, imaginary_squared = across * across - down * down, 2.0 * across * down
    strength = np.maximum(across * across + down * down, 1e-6)
    real = ((real_squared * real_squared - imaginary_squared * imaginary_squared) / strength).sum()
    imaginary = ((2.0 * real_squared * imaginary_squared) / strength).sum()
    return math.degrees(math.atan2(imaginary, real) / 4)


def upright_boxes(image: np.ndarray, boxes: Sequence[RotatedBox]) -> list[FaceBox]:
    """The boxes turned to line up with the face each one shows, so a die reaches the network square
    to the crop (in one of four quarter turns) whatever angle the box came with."""
    crops = crop_faces(image, boxes)
    return [
        FaceBox((cx, cy), (side, side), angle + face_angle(crop))
        for crop, (cx, cy, side, angle) in zip(crops, (_parse_box(box) for box in boxes))
    ]


def face_crops(image: np.ndarray, boxes: Sequence[RotatedBox]) -> np.ndarray:
    """The crops the network reads: each box lined up with its face, then cut CROP_SIZE square."""
    return crop_faces(image, upright_boxes(image, boxes))


def crops_to_blob(crops: np.ndarray) -> np.ndarray:
    """uint8 (N, S, S, 3) crops to the network's float32 (N, 3, S, S) input.

    Each crop is standardised on its own, so a dim or bright, low or high contrast die looks alike.
    """
    values = crops.astype(np.float32)
    mean = values.mean(axis=(1, 2, 3), keepdims=True)
    spread = values.std(axis=(1, 2, 3), keepdims=True)
    values = (values - mean) / np.maximum(spread, 8.0)
    return np.ascontiguousarray(values.transpose(0, 3, 1, 2))


def symmetric_views(blob: np.ndarray, mirrored: bool = True) -> np.ndarray:
    """The four quarter turns of each (C, S, S) square in a (N, C, S, S) blob and (`mirrored`) their
    mirror images, as (8, N, C, S, S), or (4, N, C, S, S) without the mirror images."""
    turns = [np.rot90(blob, quarter, axes=(2, 3)) for quarter in range(4)]
    return np.ascontiguousarray(np.stack(turns + ([turn[..., ::-1] for turn in turns] if mirrored else [])))


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=1, keepdims=True)


class FaceClassifier:
    """Reads die faces from rotated boxes with the ONNX model, loaded once on first use."""

    def __init__(self, model_path: Path | str = MODEL_PATH):
        self.network = OnnxNetwork(model_path, "face classifier")

    def logits(self, blob: np.ndarray) -> np.ndarray:
        """Raw network output (N, 7) for a blob from crops_to_blob."""
        return self.network.forward(blob).reshape(len(blob), CLASS_COUNT)

    def probabilities(self, image: np.ndarray, boxes: Sequence[RotatedBox], turned: bool = False,
                      second_look: bool = True) -> np.ndarray:
        """(N, 7) class probabilities: columns 0..5 are faces 1..6, column 6 is "not a die face".

        `turned`: the boxes already lie along their faces' edges (the reader outlines each face), so
        the turn is not measured again. `second_look`: doubtful faces are read again (read_crops).
        """
        if len(boxes) == 0:
            as_bgr(image)
            return np.zeros((0, CLASS_COUNT), np.float32)
        return self.read_crops(crop_faces(image, boxes) if turned else face_crops(image, boxes), second_look)

    def read_crops(self, crops: np.ndarray, second_look: bool = True) -> np.ndarray:
        """(N, 7) class probabilities of uint8 (N, S, S, 3) crops from crop_faces; with `second_look`,
        the doubtful ones are the mean over their eight symmetric views (SECOND_LOOK_BELOW)."""
        blob = crops_to_blob(crops)
        probabilities = softmax(self.logits(blob))
        doubtful = np.flatnonzero(probabilities.max(axis=1) < SECOND_LOOK_BELOW if second_look else [])
        if len(doubtful):
            probabilities[doubtful] = self._in_views(blob[doubtful])
        return probabilities

    def _in_views(self, blob: np.ndarray) -> np.ndarray:
        """(N, 7) mean class probabilities of each square of a blob over its eight symmetric views."""
        return self._read_views(symmetric_views(blob)).mean(axis=0)

    def _read_views(self, views: np.ndarray) -> np.ndarray:
        """(V, N, 7) class probabilities of (V, N, C, S, S) views of N squares, in one forward pass."""
        return softmax(self.logits(views.reshape(-1, *views.shape[2:]))).reshape(*views.shape[:2], CLASS_COUNT)

    def classify(
        self, image: np.ndarray, boxes: Sequence[RotatedBox], turned: bool = False, second_look: bool = True
    ) -> list[Opinion]:
        """Per box (face value 1..6, or None when it is not a readable face; confidence 0..1).

        The confidence is the probability of the class returned: of that face, or of "not a die face".
        """
        return _opinions(self.probabilities(image, boxes, turned, second_look))

    def classify_in_views(self, image: np.ndarray, boxes: Sequence[RotatedBox]) -> list[Opinion]:
        """As classify, for boxes along their faces already read doubtfully at first sight: read
        straight away in their eight symmetric views, without that first look again."""
        if len(boxes) == 0:
            as_bgr(image)
            return []
        return _opinions(self._in_views(crops_to_blob(crop_faces(image, boxes))))

    def values_in_views(self, image: np.ndarray, boxes: Sequence[RotatedBox],
                        least: Sequence[float]) -> list[Opinion | None]:
        """Per box, the mean opinion of its four quarter turns, for boxes where only a face value read
        from `least` (one per box) is of use: the reader's second-chance squares round a doubtful face.
        Their mirror images are left out: half the work, for readings as good overall (docs/reader.md).
        A box whose first two turns already leave every face value short of `least`, whatever the
        other two say, is not read in those (the network is most of the reader's time): None."""
        if len(boxes) == 0:
            as_bgr(image)
            return []
        blob = crops_to_blob(crop_faces(image, boxes))
        views = symmetric_views(blob, mirrored=False)
        half = len(views) // 2
        first = self._read_views(views[:half])
        # A view gives a value probability 1 at most, so this is the most its mean over all views can be.
        reachable = (first[:, :, :NOT_A_FACE].sum(axis=0).max(axis=1) + len(views) - half) / len(views)
        worth = np.flatnonzero(reachable >= np.asarray(least, np.float32))
        opinions: list[Opinion | None] = [None] * len(blob)
        if len(worth):
            every_view = np.concatenate([first[:, worth], self._read_views(views[half:, worth])])
            for index, opinion in zip(worth, _opinions(every_view.mean(axis=0))):
                opinions[index] = opinion
        return opinions


def _opinions(probabilities: np.ndarray) -> list[Opinion]:
    """Per row of class probabilities, the class most likely and its probability."""
    result: list[Opinion] = []
    for row in probabilities:
        best = int(np.argmax(row))
        result.append(Opinion(None if best == NOT_A_FACE else FACE_VALUES[best], float(row[best])))
    return result


@functools.cache
def default_classifier() -> FaceClassifier:
    """The shared classifier for the packaged model (the network itself loads on first use)."""
    return FaceClassifier()
