"""The reader on each real photo source, as on a tray it has never seen, and how often each alarm is false.

    .venv/bin/python benchmarks/bench_sources.py                          # packaged networks, every source
    .venv/bin/python benchmarks/bench_sources.py --held-out byler-d6 \\
        --detector /tmp/no-byler/die_detector.onnx --classifier /tmp/no-byler/face_classifier.onnx
    .venv/bin/python benchmarks/bench_sources.py --datasets /tmp/renders --sources b3   # rendered folders too
    .venv/bin/python benchmarks/bench_sources.py --save before.jsonl      # then, with a rule changed:
    .venv/bin/python benchmarks/bench_sources.py --against before.jsonl   # each picture read otherwise

Leave-one-source-out: the honest figure for a source is that of networks trained without it.
TRAINED_ON names what the packaged networks learnt from; a source they saw is marked "seen" and its
figures are optimistic. Pass networks trained without a source with --held-out to measure them on it.
The table this gives, for the shipped networks and a pair trained without byler-d6, is kept in
docs/reader.md ("Leave one source out"); the recipes are in docs/training.md.

Per source (../shared/datasets/*, and samples/), photos are split into the table-camera subset (at most
TABLE_DICE labelled dice, each at least TABLE_DIE_PX across in the photo, the camera near straight down)
and the rest; a source whose photos are all steep phone shots (STEEP) has its few-dice photos apart as
"few dice, steep", a figure of its own, not a target. For each part:
- exact: read as labelled: "ok" with exactly the labelled values, or "unsure" where the picture is
  labelled unsure (samples/ and renders: a hand, motion blur, a cocked die; the real sources have none),
  whose count is given apart; per-die: labelled dice found and read right;
- silent-wrong: read "ok" and any value wrong, a die missed included, or read "ok" where the picture is
  labelled unsure; five taken wrong: those read "ok" with five values, the roll the table would take (it
  refuses fewer as a turn's first throw): the failure that costs points; unsure: read "unsure";
- each alarm (ProblemKind): the share of photos where it fires on a labelled die the reading gives no
  value for (within a die's size of its centre: the die was there; the reader could not read it; the
  dice read are matched to the labelled ones one to one, nearest first, as for per-die), and
  where it fires anywhere else (false): away from every labelled die, or beside one read anyway (its
  shadow, its side face found again). The real sources hold no hand, so any such alarm is a false one.
  Its precision: of every alarm of that kind raised (a photo may raise several), the share on a
  labelled die left without a value: how often the tap it asks of a player is worth it.
Known gaps in the labels (NOTICE.md of each source): epanemu-d6 leaves some small translucent dice
unlabelled, so a few of its "false" alarms may be true.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import cv2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scorer.rules import DICE_PER_ROLL  # noqa: E402
from vision.die_detector import DieDetector, default_detector  # noqa: E402
from vision.face_classifier import FaceClassifier, default_classifier  # noqa: E402
from vision.labelled import (  # noqa: E402
    LabelledDie,
    LabelledImage,
    load_folder,
    matched_dice,
    read_as_labelled,
    score,
)
from vision.reader import DiceReader  # noqa: E402
from vision.reading import ProblemKind, Reading  # noqa: E402

DATASETS = REPO.parent / "shared" / "datasets"
SOURCES = ("byler-d6", "epanemu-d6", "skovy-d6")
# What the packaged networks learnt from, besides generated pictures (vision.synth).
TRAINED_ON = {"byler-d6": "its train split"}
# The pictures a table camera takes (the targets): up to about six dice, each about 30 px or
# more across. The labels cannot tell the camera's angle; see each source's NOTICE.md.
TABLE_DICE = 6
TABLE_DIE_PX = 30.0
# Sources taken at steep angles only: every one of epanemu-d6's 171 photos of few large dice was looked
# at, and each shows the dice's side faces at least half as tall as their tops (a camera tilted well
# over 30 degrees), so none is a picture a table camera takes.
STEEP = {"epanemu-d6"}


@dataclass
class Tally:
    photos: int = 0
    exact: int = 0
    silent_wrong: int = 0
    # The "wrong roll the table would accept": read ok with five values, any of them wrong. A
    # die missed is silent-wrong too: the table refuses four dice as a turn's first throw, and on a
    # later one takes the missing die for one kept aside (asking which when it cannot tell).
    accepted_wrong: int = 0
    unsure: int = 0
    # Pictures labelled unsure (a hand, motion blur, a cocked die), and those of them read unsure.
    labelled_unsure: int = 0
    called_unsure: int = 0
    dice: int = 0
    dice_right: int = 0
    # Photos where an alarm kind fires falsely, and where it fires on a die left unread.
    false_alarm: collections.Counter = field(default_factory=collections.Counter)
    on_a_die: collections.Counter = field(default_factory=collections.Counter)
    # Every alarm raised, and those of them on a die left unread: each is a tap asked of the player.
    raised: collections.Counter = field(default_factory=collections.Counter)
    raised_true: collections.Counter = field(default_factory=collections.Counter)

    def add(self, reading: Reading, label: LabelledImage, width: int, height: int) -> str:
        """Counts one picture's reading; its verdict: "exact", "silent-wrong" or "unsure"."""
        result = score(reading, label, width, height)
        doubtful = label.expected_status == "unsure"
        right = read_as_labelled(result, label)
        wrong = reading.status == "ok" and not right
        self.photos += 1
        self.exact += right
        self.silent_wrong += wrong
        self.accepted_wrong += wrong and len(reading.dice) == DICE_PER_ROLL
        self.unsure += result.unsure
        self.labelled_unsure += doubtful
        self.called_unsure += doubtful and result.unsure
        self.dice += result.dice_labelled
        self.dice_right += result.dice_right
        boxes = label.boxes_in_pixels(width, height) or ()
        unread = [box for box, die in zip(boxes, matched_dice(reading.dice, boxes)) if die is None or die.value is None]
        on_a_die = [_on_a_die(p.where, unread) for p in reading.problems]
        self.false_alarm.update({p.kind for p, true in zip(reading.problems, on_a_die) if not true})
        self.on_a_die.update({p.kind for p, true in zip(reading.problems, on_a_die) if true})
        self.raised.update(p.kind for p in reading.problems)
        self.raised_true.update(p.kind for p, true in zip(reading.problems, on_a_die) if true)
        return "exact" if right else "silent-wrong" if wrong else "unsure"

    def precision(self, kind: ProblemKind) -> float | None:
        """The share of the alarms of `kind` raised that lie on a die left unread; None if none was."""
        return self.raised_true[kind] / self.raised[kind] if self.raised[kind] else None

    def _share(self, count: int) -> str:
        return f"{count / self.photos:6.1%}"

    def _alarm_figures(self, kind: ProblemKind) -> str:
        precision = self.precision(kind)
        raised = "none raised" if precision is None else f"precision {precision:.1%} of {self.raised[kind]}"
        return (f"{kind.value} {self._share(self.false_alarm[kind])} false, "
                f"{self._share(self.on_a_die[kind])} on a die, {raised}")

    def line(self, name: str) -> str:
        if not self.photos:
            return f"  {name:24s} no photos"
        share = self._share
        doubtful = (f"; labelled unsure {self.labelled_unsure}, called unsure {self.called_unsure}"
                    if self.labelled_unsure else "")
        alarms = "  ".join(self._alarm_figures(kind) for kind in ALARMS)
        return (f"  {name:24s} {self.photos:4d} photos {self.dice:5d} dice  exact {share(self.exact)}  "
                f"per-die {self.dice_right / max(self.dice, 1):6.1%}  silent-wrong {share(self.silent_wrong)} "
                f"({self.silent_wrong}), five taken wrong {share(self.accepted_wrong)} ({self.accepted_wrong})  "
                f"unsure {share(self.unsure)}{doubtful}\n    alarms: {alarms}")


ALARMS = (ProblemKind.UNREADABLE, ProblemKind.DOUBTFUL, ProblemKind.MAYBE_DIE, ProblemKind.FOREIGN)


def _on_a_die(where: tuple[float, float] | None, boxes: list[LabelledDie]) -> bool:
    """Within a die's size of one of the labelled dice's centres: a die leaning on the wall or on another
    is labelled by its top face, and the reader finds its whole body, whose middle lies beside it."""
    if where is None:
        return False
    x, y = where
    return any(abs(x - box.x) <= box.width and abs(y - box.y) <= box.height for box in boxes)


def is_table_camera(label: LabelledImage, width: int, height: int) -> bool:
    boxes = label.boxes_in_pixels(width, height)
    if boxes is None:
        return len(label.values) <= TABLE_DICE
    return len(boxes) <= TABLE_DICE and all(min(box.width, box.height) >= TABLE_DIE_PX for box in boxes)


def bench_source(folder: Path, reader: DiceReader, split: str | None, seen: str | None,
                 log: list[dict] | None = None) -> dict[str, Tally]:
    """Reads every picture of a source and prints its figures; each picture's reading and verdict is
    appended to `log` when given (--save, --against)."""
    few_dice = "few dice, steep" if folder.name in STEEP else "table camera"
    tallies = {few_dice: Tally(), "the rest": Tally(), "all": Tally()}
    for label in load_folder(folder, split):
        image = cv2.imread(str(label.path))
        if image is None:
            print(f"  cannot decode {label.path}", file=sys.stderr)
            continue
        height, width = image.shape[:2]
        reading = reader.read(image)
        part = few_dice if is_table_camera(label, width, height) else "the rest"
        verdict = tallies[part].add(reading, label, width, height)
        tallies["all"].add(reading, label, width, height)
        if log is not None:
            log.append({"source": folder.name, "picture": label.path.name, "verdict": verdict,
                        "status": reading.status, "values": list(reading.values),
                        "problems": [problem.kind.value for problem in reading.problems]})
    held = f"seen in training ({seen}): optimistic" if seen else "held out: never trained on"
    print(f"{folder.name}{f' ({split} split)' if split else ''}: {held}")
    for name, tally in tallies.items():
        print(tally.line(name))
    return tallies


def changed_readings(before: list[dict], after: list[dict]) -> list[str]:
    """The pictures read both times whose verdict or values changed, one line each, then per source how
    many were read exactly and silently wrong before and after: what a changed rule or network did."""
    earlier = {(row["source"], row["picture"]): row for row in before}
    lines = []
    totals: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for row in after:
        old = earlier.get((row["source"], row["picture"]))
        if old is None:
            continue
        total = totals[row["source"]]
        total["pictures"] += 1
        for when, run in (("before", old), ("after", row)):
            total[f"exact {when}"] += run["verdict"] == "exact"
            total[f"silent-wrong {when}"] += run["verdict"] == "silent-wrong"
        if (old["verdict"], old["values"]) != (row["verdict"], row["values"]):
            lines.append(f"  {row['source']} {row['picture']}: {old['verdict']} -> {row['verdict']}  "
                         f"{old['status']} {old['values']} -> {row['status']} {row['values']}")
    for source, total in totals.items():
        lines.append(f"{source}: {total['pictures']} pictures, exact {total['exact before']} -> "
                     f"{total['exact after']}, silent-wrong {total['silent-wrong before']} -> "
                     f"{total['silent-wrong after']}")
    return lines or ["no picture was read both times"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=Path, default=DATASETS)
    parser.add_argument("--held-out", action="append", default=[], metavar="SOURCE",
                        help="the networks given were trained without this source (repeat for several)")
    parser.add_argument("--detector", type=Path, help="die detector ONNX (default: the packaged one)")
    parser.add_argument("--classifier", type=Path, help="face classifier ONNX (default: the packaged one)")
    parser.add_argument("--sources", nargs="*", default=[*SOURCES, "samples"],
                        help="source names under --datasets, or 'samples'")
    parser.add_argument("--split", help="only this split of each source (split.csv), e.g. test")
    parser.add_argument("--save", type=Path, metavar="FILE", help="write each picture's reading (JSON lines)")
    parser.add_argument("--against", type=Path, metavar="FILE",
                        help="a run saved with --save: list each picture whose reading changed since")
    args = parser.parse_args(argv)
    custom = args.detector is not None or args.classifier is not None
    detector = DieDetector(args.detector) if args.detector else default_detector()
    classifier = FaceClassifier(args.classifier) if args.classifier else default_classifier()
    reader = DiceReader(detector, classifier)
    log: list[dict] = []
    print(f"networks: detector {detector.network.model_path.name}, classifier {classifier.network.model_path.name}"
          f"{'' if custom else ' (packaged)'}")
    for name in args.sources:
        folder = REPO / "samples" if name == "samples" else args.datasets / name
        if not (folder / "manifest.csv").is_file():
            print(f"{name}: not here ({folder})")
            continue
        seen: str | None
        if name == "samples":
            seen = "never trained on, but the reader's rules were chosen with it in view"
        elif custom:
            seen = None if name in args.held_out else "assumed seen: not named by --held-out"
        else:
            seen = TRAINED_ON.get(name)
        bench_source(folder, reader, args.split, seen, log)
    if args.save:
        args.save.write_text("".join(json.dumps(row) + "\n" for row in log))
    if args.against:
        before = [json.loads(line) for line in args.against.read_text().splitlines() if line]
        print(f"against {args.against}:")
        print("\n".join(changed_readings(before, log)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
