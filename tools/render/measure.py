"""The reader on rendered pictures, condition by condition: how often it reads a picture exactly, how
many dice it misses, and how many cocked dice it takes for flat ones; and each flat die, opaque or
translucent, read right, left unread, misread or missed.

    python -m tools.render.measure /work/renders/b1 [--tray]

Each condition the reader issue names (wood tray, hard shadow, translucent dice, touching dice, camera
tilted over 5 degrees, cocked dice) is counted twice: every picture that has it, and the pictures that
have it alone (none of the other five); "plain" pictures have none of them. --tray gives the reader the
tray's outline, as a calibrated table does. --min-die 30 keeps only pictures whose dice are all at
least 30 px across, the pictures the reader's targets are for. --detector and --classifier measure
other networks than the packaged ones; --from-seed N only pictures of seed N on (those rendered after a
training run read the folder, say). --still-frames N reads what the table's settle detector hands over
from N frames of each still scene (rendered with `--still-frames N`): the mean of all but the first.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2

from vision import DiceReader, Reading, default_reader
from vision.die_detector import DieDetector, default_detector
from vision.face_classifier import FaceClassifier, default_classifier
from vision.settle import settled_frame

from .cli import later_frame

CONDITIONS: dict[str, Callable[[dict], bool]] = {
    "wood tray": lambda c: c["wood_tray"],
    "hard shadow": lambda c: c["hard_shadow"],
    "translucent dice": lambda c: c["translucent"],
    "touching dice": lambda c: c["touching"],
    "tilt > 5 deg": lambda c: c["tilt_deg"] > 5,
    "cocked dice": lambda c: c["cocked"],
}
# Reported apart, not as one of the six: they spoil a picture in other ways.
OTHERS: dict[str, Callable[[dict], bool]] = {
    "glare lamp": lambda c: c["glare"],
    "dim room": lambda c: c["lighting"] == "dim room",
    "hand": lambda c: c["hand"],
    "defocus": lambda c: c["defocus"],
    "motion blur": lambda c: c["motion_blur_px"] > 0,
    "smallest die < 30 px": lambda c: 0 < c["die_px"] < 30,
    "marbled dice": lambda c: c.get("marbled", False),  # batches rendered before it do not say
    "no tray": lambda c: c.get("tray") == "none",
}


@dataclass(frozen=True)
class Outcome:
    """How the reader did on one picture."""

    conditions: dict
    expected_ok: bool
    exact: bool
    said_unsure: bool
    dice: int
    missed: int
    cocked: int
    cocked_as_flat: int
    flat_dice: tuple[str, ...] = ()  # each flat die's FLAT_DIE_RESULTS, in the label's order


# What became of a die lying flat: its value read (among the dice read in its box), only dice without a
# value there, only other values, or nothing read there.
FLAT_DIE_RESULTS = ("right", "unread", "misread", "missed")


def judge(label: dict, reading: Reading) -> Outcome:
    """A die is missed when no die read lies inside its box; a cocked die is taken for flat when one
    does, it was given a value and nothing about the reading was doubted near it."""
    counted = [d for d in label["dice"] if d["in_view"] >= 0.5]
    missed = cocked = as_flat = 0
    flat_dice = []
    for die in counted:
        x0, y0, x1, y1 = die["box"]
        found = [d for d in reading.dice if x0 <= d.x <= x1 and y0 <= d.y <= y1]
        missed += not found
        if not die["cocked"]:
            values = {d.value for d in found}
            flat_dice.append("missed" if not found else "right" if die["value"] in values
                             else "unread" if values == {None} else "misread")
        else:
            cocked += 1
            doubted = any(p.where is None or (x0 <= p.where[0] <= x1 and y0 <= p.where[1] <= y1)
                          for p in reading.problems)
            as_flat += bool(found) and any(d.value is not None for d in found) and not doubted
    exact = tuple(reading.values) == tuple(label["values"])
    return Outcome(label["conditions"], label["status"] == "ok", exact, reading.status == "unsure",
                   len(counted), missed, cocked, as_flat, tuple(flat_dice))


def read_folder(folder: Path, with_tray: bool, min_die: float = 0.0, reader: DiceReader | None = None,
                from_seed: int = 0, still_frames: int = 1) -> list[Outcome]:
    reader = reader or default_reader()
    outcomes = []
    for path in sorted((folder / "truth").glob("*.json")):
        label = json.loads(path.read_text())
        if label["conditions"]["die_px"] < min_die or label["seed"] < from_seed:
            continue
        image = cv2.imread(str(folder / "images" / label["image"]))
        if image is None:
            continue
        if still_frames > 1:
            later = [cv2.imread(str(later_frame(folder, label["image"], frame))) for frame in range(1, still_frames)]
            frames = [frame for frame in later if frame is not None]
            if len(frames) < len(later):
                continue
            image = settled_frame([image, *frames])
        tray = [tuple(p) for p in label["tray_outline"]] if with_tray else None
        outcomes.append(judge(label, reader.read(image, tray=tray)))
    return outcomes


def summary(name: str, group: list[Outcome]) -> str:
    if not group:
        return f"{name:24s} {0:5d}"
    ok = [o for o in group if o.expected_ok]
    unsure = [o for o in group if not o.expected_ok]
    exact = sum(o.exact and not o.said_unsure for o in ok)
    dice = sum(o.dice for o in group)
    missed = sum(o.missed for o in group)
    cocked = sum(o.cocked for o in group)
    flat = sum(o.cocked_as_flat for o in group)
    parts = [f"{name:24s} {len(group):5d}",
             f"exact {exact / len(ok):6.1%} of {len(ok):3d}" if ok else f"exact {'-':>6s} of   0",
             f"missed {missed:3d}/{dice:4d} dice ({missed / max(dice, 1):5.1%})",
             f"unsure-expected called unsure {sum(o.said_unsure for o in unsure)}/{len(unsure)}"]
    if cocked:
        parts.append(f"cocked read as flat {flat}/{cocked}")
    return "  ".join(parts)


def report(outcomes: list[Outcome]) -> list[str]:
    lines = ["condition                 pics  exact = values right and status ok, of the pictures expected ok",
             summary("all", outcomes),
             summary("plain (none of the six)", [o for o in outcomes
                                                   if not any(f(o.conditions) for f in CONDITIONS.values())])]
    for name, has in CONDITIONS.items():
        lines.append(summary(name, [o for o in outcomes if has(o.conditions)]))
    for name, has in CONDITIONS.items():
        alone = [o for o in outcomes if has(o.conditions)
                 and not any(f(o.conditions) for other, f in CONDITIONS.items() if other != name)]
        lines.append(summary(f"{name} alone", alone))
    for name, has in OTHERS.items():
        lines.append(summary(name, [o for o in outcomes if has(o.conditions)]))
    lines.append(f"{'flat dice':24s}  dice  {'  '.join(FLAT_DIE_RESULTS)}")
    for kind, translucent in (("opaque", False), ("translucent", True)):
        results = [result for o in outcomes if o.conditions["translucent"] == translucent for result in o.flat_dice]
        counts = [results.count(name) for name in FLAT_DIE_RESULTS]
        right = f"  ({counts[0] / len(results):.1%} right)" if results else ""
        lines.append(f"{'flat dice, ' + kind:24s} {len(results):5d} " + " ".join(f"{n:6d}" for n in counts) + right)
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.render.measure", description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", type=Path, nargs="+")
    parser.add_argument("--tray", action="store_true", help="give the reader the tray's outline")
    parser.add_argument("--min-die", type=float, default=0.0, metavar="PX",
                        help="only pictures whose smallest die is at least PX across")
    parser.add_argument("--detector", type=Path, help="die detector ONNX (default: the packaged one)")
    parser.add_argument("--classifier", type=Path, help="face classifier ONNX (default: the packaged one)")
    parser.add_argument("--from-seed", type=int, default=0, help="only pictures of this seed on")
    parser.add_argument("--still-frames", type=int, default=1, metavar="N",
                        help="read the settle detector's mean of N frames of each still scene (see above)")
    args = parser.parse_args(argv)
    if args.still_frames < 1:
        parser.error("--still-frames must be 1 or more")
    reader = DiceReader(DieDetector(args.detector) if args.detector else default_detector(),
                        FaceClassifier(args.classifier) if args.classifier else default_classifier())
    outcomes = [o for folder in args.folders
                for o in read_folder(folder, args.tray, args.min_die, reader, args.from_seed, args.still_frames)]
    if not outcomes:
        print("no rendered pictures found", file=sys.stderr)
        return 1
    print("\n".join(report(outcomes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
