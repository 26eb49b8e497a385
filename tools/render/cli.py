"""Render scenes seed by seed into a labelled folder; seeds already there are skipped, so a run cut
short is resumed by running it again."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from .labels import prepare_folder, truth, write_labels, write_manifest
from .plan import ONLY_CONDITIONS, OTHER_CONDITIONS, SINGLE_CONDITIONS, SIZE, plan_scene
from .post import develop, jpeg


def image_name(seed: int) -> str:
    return f"render_{seed:06d}.jpg"


def later_frame(out: Path, name: str, frame: int) -> Path:
    """Where frame `frame` (1, 2, ...) of the still scene whose picture is images/`name` is written."""
    return out / "frames" / f"{Path(name).stem}_{frame}.jpg"


def condition_of(seed: int, by_condition: bool, only: str | None = None) -> str | None:
    """The one condition the scene of `seed` is planned with: `only` for every scene, or with
    --conditions each of SINGLE_CONDITIONS in turn, seed after seed; None: any mix."""
    if only is not None:
        return only
    return SINGLE_CONDITIONS[seed % len(SINGLE_CONDITIONS)] if by_condition else None


def render_one(out: Path, seed: int, samples: int, threads: int, only: str | None,
               size: tuple[int, int] = SIZE, still_frames: int = 1) -> dict:
    """Render the scene of `seed` into `out`, `size` (width, height) pixels: the JPEG, its YOLO label and
    its truth file; and with `still_frames` over 1, that many frames of the still scene in all, the later
    ones in frames/ (see `later_frame`)."""
    from .blender import render_linear  # the only import of bpy

    scene = plan_scene(seed, size, only)
    light = render_linear(scene, samples, threads)
    name = image_name(seed)
    label = truth(scene, name)
    (out / "images" / name).write_bytes(jpeg(develop(light, scene.lens, seed), scene.lens.jpeg_quality))
    for frame in range(1, still_frames):
        path = later_frame(out, name, frame)
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(jpeg(develop(light, scene.lens, seed, frame), scene.lens.jpeg_quality))
    write_labels(out, label)
    return label


def relabel(out: Path) -> int:
    """Label the folder's pictures again from their seeds (the scene plan is pure, so no rendering):
    for when the labelling, not the scene, has changed."""
    count = 0
    for path in sorted((out / "truth").glob("*.json")):
        old = json.loads(path.read_text())
        write_labels(out, truth(plan_scene(old["seed"], (old["width"], old["height"]), old.get("only")),
                                old["image"]))
        count += 1
    write_manifest(out)
    return count


def frame_size(text: str) -> tuple[int, int]:
    """WIDTHxHEIGHT, as --size takes it."""
    width, _, height = text.lower().partition("x")
    try:
        size = int(width), int(height)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not WIDTHxHEIGHT, e.g. 1280x960") from None
    if min(size) < 64:
        raise argparse.ArgumentTypeError(f"{text!r} is too small: at least 64x64")
    return size


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.render", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for images/, labels/, truth/, manifest.csv")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first scene (default 0)")
    parser.add_argument("--count", type=int, default=1, help="number of scenes (default 1)")
    parser.add_argument("--samples", type=int, default=8, help="Cycles samples per pixel (default 8, denoised)")
    parser.add_argument("--threads", type=int, default=0, help="render threads (default: every core)")
    parser.add_argument("--size", type=frame_size, default=SIZE, metavar="WxH",
                        help="picture size (default 640x480; the table camera's frames are 1280x960)")
    one_condition = parser.add_mutually_exclusive_group()
    one_condition.add_argument("--conditions", action="store_true",
                               help="one reader condition per scene, in turn: " + ", ".join(SINGLE_CONDITIONS))
    one_condition.add_argument("--only", choices=ONLY_CONDITIONS, metavar="CONDITION",
                               help="every scene with this one condition: one of --conditions', or "
                                    + ", ".join(OTHER_CONDITIONS))
    parser.add_argument("--still-frames", type=int, default=1, metavar="N",
                        help="N frames of each still scene, each with its own sensor noise: the first in "
                             "images/, the rest in frames/ (default 1)")
    parser.add_argument("--relabel", action="store_true",
                        help="rewrite the labels of the pictures already in --out from their seeds; render nothing")
    args = parser.parse_args(argv)
    if args.count < 0 or args.samples < 1 or args.threads < 0 or args.still_frames < 1:
        parser.error("--count must be 0 or more, --samples and --still-frames 1 or more, --threads 0 or more")
    if args.relabel:
        print(f"labelled {relabel(args.out)} pictures in {args.out} again")
        return 0
    try:
        import bpy  # noqa: F401
    except ImportError:
        print("rendering needs Blender's Python module: pip install -e '.[render]'", file=sys.stderr)
        return 2
    prepare_folder(args.out)
    cpu_before = time.process_time()
    for seed in range(args.seed, args.seed + args.count):
        if (args.out / "truth" / f"{image_name(seed)[:-4]}.json").is_file():
            continue
        started = time.perf_counter()
        label = render_one(args.out, seed, args.samples, args.threads, condition_of(seed, args.conditions, args.only),
                           args.size, args.still_frames)
        seconds = time.perf_counter() - started
        # the manifest after every picture: a folder being filled can be read (and trained on) at any time
        count = write_manifest(args.out)
        print(f"seed {seed}: {len(label['dice'])} dice {label['values']} {label['status']} in {seconds:.1f} s "
              f"({time.process_time() - cpu_before:.1f} s CPU), {count} in the folder", flush=True)
        cpu_before = time.process_time()
    print(f"{write_manifest(args.out)} labelled pictures in {args.out}")
    return 0
