"""Labels from the scene's geometry, written as the shared photo sets are (vision/labelled.py reads
both alike): images/<name>.jpg, labels/<name>.txt (YOLO `class cx cy w h`, normalised, class = value
- 1, boxing the top face), manifest.csv (image, values, status) and, beyond those, truth/<name>.json
with everything known about the picture.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np

from .geometry import footprint, polygons_overlap, top_face, visible_fraction
from .plan import Scene

# A die whose top face is less than half in view is not counted in the values a reader should give,
# and makes the picture one to be unsure of.
COUNTED = 0.5
TOUCH_MM = 0.5  # dice closer than this touch


def die_truth(scene: Scene, index: int) -> dict:
    planned = scene.dice[index]
    die = planned.pose
    value, normal, corners = top_face(die)
    points = scene.camera.project(corners)
    middle = scene.camera.project(corners.mean(axis=0)[None])[0]
    others = [d for i, d in enumerate(scene.poses()) if i != index]
    x0, y0 = np.clip(points.min(axis=0), 0, (scene.width, scene.height))
    x1, y1 = np.clip(points.max(axis=0), 0, (scene.width, scene.height))
    side = float(np.linalg.norm(points - np.roll(points, -1, axis=0), axis=1).mean())
    return {
        "value": int(value),
        "x": round(float(middle[0]), 2),
        "y": round(float(middle[1]), 2),
        "box": [round(float(v), 2) for v in (x0, y0, x1, y1)],
        "corners": [[round(float(px), 2), round(float(py), 2)] for px, py in points],
        "size": round(side, 1),  # the mean side in px, as in vision.synth truth files
        "in_view": round(visible_fraction(scene.camera, die, others, scene.tray, scene.capsules), 3),
        "cocked": planned.cocked,
        "rests": planned.rests,
        "lean_deg": round(math.degrees(math.acos(min(1.0, float(normal[2])))), 1),
        "colour": planned.look.colour,
        "pip_colour": planned.look.pip_colour,
        "pips": planned.look.pips,
        "size_mm": round(die.size, 2),
    }


def touching_pairs(scene: Scene) -> int:
    """How many pairs of flat dice touch (closer than TOUCH_MM between their corners' hulls); a cocked
    die touches what it leans on, and counts as cocked, not as touching."""
    poses = [d.pose for d in scene.dice if not d.cocked]
    return sum(polygons_overlap(footprint(a), footprint(b), TOUCH_MM)
               for i, a in enumerate(poses) for b in poses[i + 1:])


def conditions(scene: Scene, dice: list[dict]) -> dict:
    """What about this picture may trouble a reader, for figures per condition."""
    return {
        "tray": scene.tray_material,
        "tray_shape": scene.tray.shape,
        "table": scene.table_material,
        "lighting": scene.lighting,
        "hard_shadow": scene.lighting == "low hard light",
        "glare": scene.lighting == "glare",
        "wood_tray": scene.tray_material.endswith("wood"),
        "translucent": any(d["colour"] == "translucent" for d in dice),
        "marbled": any(planned.look.vein is not None for planned in scene.dice),
        "mixed_colours": len({d["colour"] for d in dice}) > 1,
        "touching": touching_pairs(scene) > 0 or any(d["rests"] == "touching" for d in dice),
        "cocked": any(d["cocked"] for d in dice),
        "hand": bool(scene.hand),
        "tilt_deg": round(scene.tilt, 1),
        "defocus": scene.lens.fstop < 4,
        "motion_blur_px": round(scene.lens.motion_blur[0], 1),
        "extras": [e.kind for e in scene.extras],
        "die_px": round(min((d["size"] for d in dice), default=0.0), 1),
    }


def truth(scene: Scene, image_name: str) -> dict:
    dice = [die_truth(scene, i) for i in range(len(scene.dice))]
    counted = [d for d in dice if d["in_view"] >= COUNTED]
    problems = []
    if any(d["cocked"] for d in counted):
        problems.append("cocked die")
    if scene.hand:
        problems.append("hand in view")
    if any(0 < d["in_view"] < COUNTED for d in dice):
        problems.append("die mostly hidden")
    rim = scene.camera.project(scene.tray.inner_rim())
    return {
        "image": image_name,
        "seed": scene.seed,
        "only": scene.only,
        "width": scene.width,
        "height": scene.height,
        "values": sorted(d["value"] for d in counted),
        "status": "unsure" if problems else "ok",
        "problems": problems,
        "dice": dice,
        "tray_outline": [[round(float(x), 1), round(float(y), 1)] for x, y in rim],
        "conditions": conditions(scene, dice),
    }


def yolo_lines(label: dict) -> list[str]:
    """One line per die counted in the values, boxing the part of its top face inside the picture."""
    lines = []
    for die in label["dice"]:
        if die["in_view"] < COUNTED:
            continue
        x0, y0, x1, y1 = die["box"]
        w, h = label["width"], label["height"]
        lines.append(f"{die['value'] - 1} {(x0 + x1) / 2 / w:.6f} {(y0 + y1) / 2 / h:.6f} "
                     f"{(x1 - x0) / w:.6f} {(y1 - y0) / h:.6f}")
    return lines


def prepare_folder(out: Path) -> None:
    for folder in ("images", "labels", "truth"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    (out / "labels" / "classes.txt").write_text("".join(f"{v}\n" for v in range(1, 7)))


def write_labels(out: Path, label: dict) -> None:
    """The picture's YOLO file and truth file (the image itself is written first, by the renderer)."""
    stem = Path(label["image"]).stem
    (out / "labels" / f"{stem}.txt").write_text("".join(line + "\n" for line in yolo_lines(label)))
    (out / "truth" / f"{stem}.json").write_text(json.dumps(label, indent=1) + "\n")


def split_of(seed: int) -> str:
    """Every tenth seed is held out, so renders can be scored apart from those trained on."""
    return "test" if seed % 10 == 9 else "train"


def write_manifest(out: Path) -> int:
    """manifest.csv and split.csv listing every picture of the folder whose truth file exists, in seed
    order (so a run cut short and resumed gives the same files); returns how many."""
    labels = [json.loads(path.read_text()) for path in (out / "truth").glob("*.json")]
    labels = [label for label in labels if (out / "images" / label["image"]).is_file()]
    labels.sort(key=lambda label: label["seed"])
    with open(out / "manifest.csv", "w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["image", "values", "status"])
        for label in labels:
            writer.writerow([label["image"], "-".join(map(str, label["values"])), label["status"]])
    with open(out / "split.csv", "w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["image", "split"])
        for label in labels:
            writer.writerow([label["image"], split_of(label["seed"])])
    return len(labels)
