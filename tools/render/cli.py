"""Render scenes seed by seed into a labelled folder; seeds already there are skipped, so a run cut
short is resumed by running it again."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from .labels import prepare_folder, truth, write_labels, write_manifest
from .plan import SIZE, plan_scene
from .post import develop, jpeg


def image_name(seed: int) -> str:
    return f"render_{seed:06d}.jpg"


def render_one(out: Path, seed: int, samples: int, threads: int) -> dict:
    """Render the scene of `seed` into `out`: the JPEG, its YOLO label and its truth file."""
    from .blender import render_linear  # the only import of bpy

    scene = plan_scene(seed, SIZE)
    picture = develop(render_linear(scene, samples, threads), scene.lens, seed)
    name = image_name(seed)
    label = truth(scene, name)
    (out / "images" / name).write_bytes(jpeg(picture, scene.lens.jpeg_quality))
    write_labels(out, label)
    return label


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.render", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for images/, labels/, truth/, manifest.csv")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first scene (default 0)")
    parser.add_argument("--count", type=int, default=1, help="number of scenes (default 1)")
    parser.add_argument("--samples", type=int, default=8, help="Cycles samples per pixel (default 8, denoised)")
    parser.add_argument("--threads", type=int, default=0, help="render threads (default: every core)")
    args = parser.parse_args(argv)
    if args.count < 0 or args.samples < 1 or args.threads < 0:
        parser.error("--count must be 0 or more, --samples 1 or more, --threads 0 or more")
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
        label = render_one(args.out, seed, args.samples, args.threads)
        seconds = time.perf_counter() - started
        # the manifest after every picture: a folder being filled can be read (and trained on) at any time
        count = write_manifest(args.out)
        print(f"seed {seed}: {len(label['dice'])} dice {label['values']} {label['status']} in {seconds:.1f} s "
              f"({time.process_time() - cpu_before:.1f} s CPU), {count} in the folder", flush=True)
        cpu_before = time.process_time()
    print(f"{write_manifest(args.out)} labelled pictures in {args.out}")
    return 0
