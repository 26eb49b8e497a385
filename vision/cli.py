"""`yacht-table read IMG [IMG ...]`: read the dice in picture files, one line per picture."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import cv2
import numpy as np


def add_commands(commands: argparse._SubParsersAction) -> None:
    read_parser = commands.add_parser(
        "read",
        help="read the dice in picture files",
        description="Read the dice in each picture; exit status 1 if any picture could not be read at all.",
    )
    read_parser.add_argument("images", nargs="+", metavar="IMG", help="picture files (jpg, png, ...)")
    read_parser.add_argument("--json", action="store_true", help="one JSON object per line per picture")
    read_parser.add_argument("--annotate", metavar="DIR", help="also write each picture with the dice drawn to DIR")
    read_parser.add_argument("--tray", type=_tray, metavar="X,Y,W,H",
                             help="look for dice on the tray only: its rectangle, or its outline as "
                                  "x1,y1,x2,y2,x3,y3,... (pixels of the pictures); things outside it are never read")
    read_parser.set_defaults(run=run_read)


def _tray(text: str):
    from .tray import Tray

    try:
        return Tray.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def decode(path: str) -> np.ndarray:
    """The picture at `path` as BGR, or a ValueError naming what is wrong with the file."""
    file = Path(path)
    if not file.is_file():
        raise ValueError("no such file" if not file.exists() else "not a file")
    data = np.fromfile(file, np.uint8)
    image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if image is None:
        raise ValueError("not a picture OpenCV can decode (corrupt or not an image)")
    return image


def read_one(path: str, annotate_dir: Path | None, tray=None) -> dict:
    """The JSON-ready result for one picture; never raises for a bad picture."""
    from . import annotate, read_dice

    try:
        image = decode(path)
        started = time.perf_counter()
        reading = read_dice(image, tray=tray)
        elapsed_ms = (time.perf_counter() - started) * 1000.0
    except ValueError as error:
        return {"image": path, "status": "error", "values": [], "dice": [], "problems": [str(error)], "ms": 0.0}
    result = reading.to_dict()
    if annotate_dir is not None:
        target = annotate_dir / (Path(path).stem + ".png")
        if not cv2.imwrite(str(target), annotate(image, reading)):
            result["problems"].append(f"could not write {target}")
    return {
        "image": path,
        "status": result["status"],
        "values": result["values"],
        "dice": [{k: die[k] for k in ("value", "x", "y", "confidence")} for die in result["dice"]],
        "problems": result["problems"],
        "ms": round(elapsed_ms, 2),
    }


def human_line(result: dict) -> str:
    values = " ".join(map(str, result["values"])) or "no dice"
    if result["status"] == "error":
        return f"{result['image']}: error: {'; '.join(result['problems'])}"
    line = f"{result['image']}: {result['status']}: {values} ({result['ms']:.1f} ms)"
    if result["problems"]:
        line += " - " + "; ".join(result["problems"])
    return line


def run_read(args: argparse.Namespace) -> int:
    annotate_dir = None
    if args.annotate:
        annotate_dir = Path(args.annotate)
        try:
            annotate_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ValueError(f"cannot make the --annotate folder {annotate_dir}: {error.strerror}") from None
    from .reader import prepare

    prepare()  # one-time set-up (tables, the classifier) before the first picture's clock starts
    any_error = False
    for path in args.images:
        result = read_one(path, annotate_dir, args.tray)
        any_error |= result["status"] == "error"
        print(json.dumps(result) if args.json else human_line(result), flush=True)
    return 1 if any_error else 0
