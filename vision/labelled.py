"""Labelled picture folders and how a reading is scored against their labels.

A folder holds `manifest.csv` (columns image, values: the sorted face values joined by '-', and
optionally status: the reading expected, "ok" or "unsure"), optionally `labels/<stem>.txt` YOLO boxes
(`class cx cy w h`, normalised, value = class + 1) and `split.csv` (image, split). Both the shared
photo sets and samples/ have this shape. Used by benchmarks/bench_vision.py, the training tools and
the reader's tests. The few published labels known to be wrong are set right on loading (KNOWN_LABEL_ERRORS).
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .reading import Die, Reading


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


@dataclass(frozen=True)
class LabelError:
    """A die whose published label is not the value its top face shows: the `line`-th (from 0) box of
    labels/<stem of image>.txt says `labelled`, the picture shows `seen`."""

    image: str
    line: int
    labelled: int
    seen: int


# Each one looked at by eye at full size; positions in pixels for whoever checks them again.
KNOWN_LABEL_ERRORS: dict[str, tuple[LabelError, ...]] = {
    "byler-d6": (
        LabelError("IMG_20191209_095555.jpg", line=5, labelled=5, seen=6),  # test: (161, 264), a purple six
        LabelError("IMG_20191209_100002.jpg", line=2, labelled=2, seen=3),  # test: (137, 362), a green three
        LabelError("IMG_20191208_111246.jpg", line=0, labelled=2, seen=3),  # train: (138, 223), a blue three
        LabelError("IMG_20191209_095439.jpg", line=9, labelled=5, seen=4),  # train: (332, 386), a purple four
        LabelError("IMG_20191209_095954.jpg", line=2, labelled=2, seen=3),  # train: (240, 339), a green three
        # train: (433, 438), a white five seen at a slant, the six on its side face showing too
        LabelError("IMG_20191209_100722.jpg", line=4, labelled=6, seen=5),
    ),
}


def corrected(label: LabelledImage, errors: list[LabelError]) -> LabelledImage:
    """The image's labels with its known errors set right, in the boxes and in the sorted values."""
    dice, values = list(label.dice or ()), list(label.values)
    for error in errors:
        if not (0 <= error.line < len(dice) and dice[error.line].value == error.labelled
                and error.labelled in values):
            raise ValueError(f"{label.path.name}: the known label error {error} no longer matches the "
                             f"published labels; look at the picture again and mend KNOWN_LABEL_ERRORS")
        die = dice[error.line]
        dice[error.line] = LabelledDie(error.seen, die.x, die.y, die.width, die.height)
        values.remove(error.labelled)
        values.append(error.seen)
    return LabelledImage(label.path, tuple(sorted(values)), label.expected_status, tuple(dice))


def _values(text: str) -> tuple[int, ...]:
    return tuple(sorted(int(v) for v in text.split("-") if v.strip()))


def _yolo(path: Path) -> tuple[LabelledDie, ...]:
    dice = []
    for line in path.read_text().splitlines():
        if line.strip():
            cls, x, y, w, h = line.split()[:5]
            dice.append(LabelledDie(int(cls) + 1, float(x), float(y), float(w), float(h)))
    return tuple(dice)


def load_folder(folder: Path, split: str | None = None,
                corrections: tuple[LabelError, ...] | None = None) -> list[LabelledImage]:
    """The folder's labelled images, in manifest order; only those of `split` when given. The label
    errors in `corrections` are set right: by default the known ones of a folder of that name, ()
    leaves the labels as published."""
    folder = Path(folder)
    if corrections is None:
        corrections = KNOWN_LABEL_ERRORS.get(folder.name, ())
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
            label = LabelledImage(
                folder / "images" / row["image"],
                _values(row["values"]),
                row.get("status") or "ok",
                _yolo(label_file) if label_file.is_file() else None,
            )
            errors = [error for error in corrections if error.image == row["image"]]
            images.append(corrected(label, errors) if errors else label)
    return images


def read_as_labelled(result: Score, label: LabelledImage) -> bool:
    """Read "ok" with exactly the labelled values, or "unsure" where the picture is labelled unsure (a
    hand, motion blur, a cocked die: the table must not take its top faces as a clean roll)."""
    return result.unsure if label.expected_status == "unsure" else result.exact and not result.unsure


def matched_dice(dice: Sequence[Die], boxes: Sequence[LabelledDie]) -> list[Die | None]:
    """Per labelled box, the die read for it: the nearest one whose centre lies in the box and not taken
    by a box before it (None where there is none)."""
    free = list(dice)
    matched: list[Die | None] = []
    for box in boxes:
        inside = [d for d in free if abs(d.x - box.x) <= box.width / 2 and abs(d.y - box.y) <= box.height / 2]
        nearest = min(inside, key=lambda d: (d.x - box.x) ** 2 + (d.y - box.y) ** 2) if inside else None
        if nearest is not None:
            free.remove(nearest)
        matched.append(nearest)
    return matched


def score(reading: Reading, label: LabelledImage, width: int, height: int) -> Score:
    """Exact: the values read are the labelled ones. Silent wrong: status ok yet not exact.
    Dice right: labelled dice whose centre holds a detection (nearest first) with the right value;
    dice misread: those whose detection was given a value, and the wrong one."""
    values = tuple(reading.values)
    exact = values == label.values
    boxes = label.boxes_in_pixels(width, height)
    right = misread = 0
    if boxes is not None:
        for box, die in zip(boxes, matched_dice(reading.dice, boxes)):
            right += die is not None and die.value == box.value
            misread += die is not None and die.value is not None and die.value != box.value
    return Score(exact, reading.status == "ok" and not exact, reading.status == "unsure",
                 len(boxes) if boxes is not None else len(label.values), right, misread)
