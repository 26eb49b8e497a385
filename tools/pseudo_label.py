"""Label pictures of one table's dice with the reader's own readings, so the classifier can learn those dice.

    .venv/bin/python tools/pseudo_label.py throws/ --out /tmp/own-1
    .venv/bin/python tools/pseudo_label.py throws/ --out /tmp/own-2 --classifier /tmp/own-1/face_classifier.int8.onnx

Each picture read `ok` becomes a labelled picture in vision/labelled.py's folder form: images/ (links to
the pictures), labels/ (YOLO boxes, class = value - 1), manifest.csv and split.csv (all `train`). A die's
box is 1.3 times its face's side: the upright box round a turned face, as the renders box theirs. A
picture read `unsure` is left out whole, since a die left unread in it would be taught as bare floor.
No label is read: docs/training.md ("Learning a table's own dice") fine-tunes the classifier on the
folder and measures what that gives on dice the networks never saw.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import cv2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hardware.camera import list_images  # noqa: E402
from vision.die_detector import MODEL_PATH as DETECTOR_PATH  # noqa: E402
from vision.die_detector import DieDetector  # noqa: E402
from vision.face_classifier import MODEL_PATH as CLASSIFIER_PATH  # noqa: E402
from vision.face_classifier import FaceClassifier  # noqa: E402
from vision.reader import DiceReader  # noqa: E402
from vision.reading import Reading  # noqa: E402

# A die's labelled box over its face's side: the mean upright box of a square turned at random.
BOX_OVER_FACE = 1.3


def yolo_lines(reading: Reading, width: int, height: int) -> list[str]:
    """One YOLO line per die read, its box clipped to the frame."""
    lines = []
    for die in reading.dice:
        assert die.value is not None, "a reading taken `ok` gives every die a value"
        side = BOX_OVER_FACE * die.size
        left, right = max(0.0, die.x - side / 2), min(float(width), die.x + side / 2)
        top, bottom = max(0.0, die.y - side / 2), min(float(height), die.y + side / 2)
        lines.append(f"{die.value - 1} {(left + right) / 2 / width:.6f} {(top + bottom) / 2 / height:.6f} "
                     f"{(right - left) / width:.6f} {(bottom - top) / height:.6f}")
    return lines


def pseudo_label(reader: DiceReader, pictures: list[Path], out: Path) -> tuple[int, int]:
    """Write the pictures `reader` reads `ok` to `out` as a labelled folder; (pictures, dice) written."""
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "labels").mkdir(exist_ok=True)
    written: list[tuple[str, str]] = []
    dice = 0
    for path in pictures:
        image = cv2.imread(str(path))
        if image is None:
            print(f"{path}: not a picture, left out", file=sys.stderr)
            continue
        reading = reader.read(image)
        if reading.status != "ok" or not reading.dice:
            continue
        # Pictures from several folders may share a name.
        name = f"{len(written):05d}_{path.name}"
        link = out / "images" / name
        link.unlink(missing_ok=True)
        link.symlink_to(path.resolve())
        height, width = image.shape[:2]
        (out / "labels" / f"{Path(name).stem}.txt").write_text("\n".join(yolo_lines(reading, width, height)) + "\n")
        written.append((name, "-".join(str(value) for value in sorted(reading.values))))
        dice += len(reading.dice)
    with open(out / "manifest.csv", "w", newline="") as handle:
        rows = csv.writer(handle)
        rows.writerow(["image", "values", "status"])
        rows.writerows((name, values, "ok") for name, values in written)
    with open(out / "split.csv", "w", newline="") as handle:
        rows = csv.writer(handle)
        rows.writerow(["image", "split"])
        rows.writerows((name, "train") for name, _ in written)
    return len(written), dice


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", type=Path, nargs="+", metavar="DIR", help="folders of pictures of one set of dice")
    parser.add_argument("--out", type=Path, required=True, help="the labelled folder to write (emptied first)")
    parser.add_argument("--detector", type=Path, default=DETECTOR_PATH)
    parser.add_argument("--classifier", type=Path, default=CLASSIFIER_PATH,
                        help="the classifier that reads them (a learnt one, for a second round)")
    args = parser.parse_args(argv)
    pictures = [path for folder in args.folders for path in list_images(folder)]
    if not pictures:
        raise SystemExit(f"no pictures in {', '.join(map(str, args.folders))}")
    if (args.out / "manifest.csv").exists():
        for stale in [*(args.out / "images").glob("*"), *(args.out / "labels").glob("*")]:
            stale.unlink()
    reader = DiceReader(DieDetector(args.detector), FaceClassifier(args.classifier))
    count, dice = pseudo_label(reader, pictures, args.out)
    print(f"{count} of {len(pictures)} pictures read `ok`, {dice} dice: {args.out}")


if __name__ == "__main__":
    main()
