"""A contact sheet of a labelled folder: each picture with its labels drawn on (top-face outline and
value, C for cocked, the share of the face in view, the tray's rim), and each die's top face enlarged
beside it, so that a wrong label shows at a glance.

    python -m tools.render.contact /work/renders/batch1 --out sheet.png --first 0 --count 12
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

TILE = (480, 360)
CROP = 72


def annotated(image: np.ndarray, label: dict) -> np.ndarray:
    canvas = image.copy()
    rim = np.round(np.array(label["tray_outline"])).astype(np.int32)
    cv2.polylines(canvas, [rim], True, (255, 200, 0), 1, cv2.LINE_AA)
    for die in label["dice"]:
        corners = np.round(np.array(die["corners"])).astype(np.int32)
        colour = (0, 0, 255) if die["cocked"] else (0, 255, 0)
        cv2.polylines(canvas, [corners], True, colour, 1, cv2.LINE_AA)
        text = f"{die['value']}{'C' if die['cocked'] else ''}"
        if die["in_view"] < 1:
            text += f" {die['in_view']:.0%}"
        where = (int(die["box"][2]) + 2, int(die["box"][1]) + 10)
        cv2.putText(canvas, text, where, cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 3, cv2.LINE_AA)
        cv2.putText(canvas, text, where, cv2.FONT_HERSHEY_SIMPLEX, 0.45, colour, 1, cv2.LINE_AA)
    return canvas


def face_crops(image: np.ndarray, label: dict) -> list[np.ndarray]:
    """Each die's box and a little around it, enlarged, with its labelled value in the corner."""
    crops = []
    for die in label["dice"]:
        x0, y0, x1, y1 = die["box"]
        pad = 0.3 * max(x1 - x0, y1 - y0)
        left, top = max(0, int(x0 - pad)), max(0, int(y0 - pad))
        right, bottom = min(image.shape[1], int(x1 + pad) + 1), min(image.shape[0], int(y1 + pad) + 1)
        if right - left < 2 or bottom - top < 2:
            continue
        crop = cv2.resize(image[top:bottom, left:right], (CROP, CROP), interpolation=cv2.INTER_CUBIC)
        text = f"{die['value']}{'C' if die['cocked'] else ''}"
        cv2.putText(crop, text, (3, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 3, cv2.LINE_AA)
        cv2.putText(crop, text, (3, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 255, 255), 1, cv2.LINE_AA)
        crops.append(crop)
    return crops


def tile(folder: Path, label: dict) -> np.ndarray:
    image = cv2.imread(str(folder / "images" / label["image"]))
    if image is None:
        raise ValueError(f"cannot read {folder / 'images' / label['image']}")
    picture = cv2.resize(annotated(image, label), TILE, interpolation=cv2.INTER_AREA)
    cv2.putText(picture, f"{label['image']} {label['conditions']['lighting']}, {label['conditions']['tray']}",
                (4, TILE[1] - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (255, 255, 255), 1, cv2.LINE_AA)
    column = np.zeros((TILE[1], CROP * 2, 3), np.uint8)
    for k, crop in enumerate(face_crops(image, label)[:10]):
        row, col = divmod(k, 2)
        column[row * CROP:(row + 1) * CROP, col * CROP:(col + 1) * CROP] = crop
    return np.hstack([picture, column])


def sheet(folder: Path, first: int, count: int, columns: int = 2) -> np.ndarray:
    paths = sorted((folder / "truth").glob("*.json"))[first:first + count]
    if not paths:
        raise ValueError(f"no truth files in {folder / 'truth'} from number {first}")
    tiles = [tile(folder, json.loads(path.read_text())) for path in paths]
    blank = np.zeros_like(tiles[0])
    tiles += [blank] * (-len(tiles) % columns)
    rows = [np.hstack(tiles[i:i + columns]) for i in range(0, len(tiles), columns)]
    return np.vstack(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.render.contact", description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--out", type=Path, required=True, help="PNG to write")
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--count", type=int, default=12)
    args = parser.parse_args(argv)
    if not cv2.imwrite(str(args.out), sheet(args.folder, args.first, args.count)):
        raise OSError(f"could not write {args.out}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
