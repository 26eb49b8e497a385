"""Labelled picture folders and how a reading is scored against their labels.

A folder holds `manifest.csv` (columns image, values: the sorted face values joined by '-', and
optionally status: the reading expected, "ok" or "unsure"), optionally `labels/<stem>.txt` YOLO boxes
(`class cx cy w h`, normalised, value = class + 1) and `split.csv` (image, split). Both the shared
photo sets and samples/ have this shape. Used by benchmarks/bench_vision.py and the reader's tests.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from .reading import Reading


@dataclass(frozen=True)
class LabelledDie:
    value: int
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class LabelledImage:
    path: Path
    values: tuple[int, ...]
    expected_status: str
    dice: tuple[LabelledDie, ...] | None

    def boxes_in_pixels(self, width: int, height: int) -> tuple[LabelledDie, ...] | None:
        if self.dice is None:
            return None
        return tuple(LabelledDie(d.value, d.x * width, d.y * height, d.width * width, d.height * height)
                     for d in self.dice)


@dataclass(frozen=True)
class Score:
    exact: bool
    silent_wrong: bool
    unsure: bool
    dice_labelled: int
    dice_right: int
    dice_misread: int


def _values(text: str) -> tuple[int, ...]:
    return tuple(sorted(int(v) for v in text.split("-") if v.strip()))


def _yolo(path: Path) -> tuple[LabelledDie, ...]:
    dice = []
    for line in path.read_text().splitlines():
        if line.strip():
            cls, x, y, w, h = line.split()[:5]
            dice.append(LabelledDie(int(cls) + 1, float(x), float(y), float(w), float(h)))
    return tuple(dice)


def load_folder(folder: Path, split: str | None = None) -> list[LabelledImage]:
    """The folder's labelled images, in manifest order; only those of `split` when given."""
    folder = Path(folder)
    manifest = folder / "manifest.csv"
    if not manifest.is_file():
        raise ValueError(f"{folder} has no manifest.csv")
    chosen = None
    if split is not None:
        split_file = folder / "split.csv"
        if not split_file.is_file():
            raise ValueError(f"{folder} has no split.csv, so no '{split}' split")
        with open(split_file, newline="") as handle:
            chosen = {row["image"] for row in csv.DictReader(handle) if row["split"] == split}
    images = []
    with open(manifest, newline="") as handle:
        for row in csv.DictReader(handle):
            if chosen is not None and row["image"] not in chosen:
                continue
            label_file = folder / "labels" / (Path(row["image"]).stem + ".txt")
            images.append(LabelledImage(
                folder / "images" / row["image"],
                _values(row["values"]),
                row.get("status") or "ok",
                _yolo(label_file) if label_file.is_file() else None,
            ))
    return images


def score(reading: Reading, label: LabelledImage, width: int, height: int) -> Score:
    """Exact: the values read are the labelled ones. Silent wrong: status ok yet not exact.
    Dice right: labelled dice whose centre holds a detection (nearest first) with the right value;
    dice misread: those whose detection was given a value, and the wrong one."""
    values = tuple(reading.values)
    exact = values == label.values
    boxes = label.boxes_in_pixels(width, height)
    right = misread = 0
    if boxes is not None:
        free = list(reading.dice)
        for box in boxes:
            inside = [d for d in free if abs(d.x - box.x) <= box.width / 2 and abs(d.y - box.y) <= box.height / 2]
            if not inside:
                continue
            nearest = min(inside, key=lambda d: (d.x - box.x) ** 2 + (d.y - box.y) ** 2)
            free.remove(nearest)
            right += nearest.value == box.value
            misread += nearest.value is not None and nearest.value != box.value
    return Score(exact, reading.status == "ok" and not exact, reading.status == "unsure",
                 len(boxes) if boxes is not None else len(label.values), right, misread)
