"""Settle detector and sample generator benchmark.

    .venv/bin/python benchmarks/bench_settle.py [--runs 7]

The settle detector runs on every camera frame, so its cost per frame matters on a Pi: it is printed
for three frame sizes as the median over several runs of a 30-frame throw, beside the cost of a plain
cv2.cvtColor + GaussianBlur(5x5) of the same frame measured in the same run (machines are noisy; the
ratio travels). CPU time is printed too: on a machine shared with other work, wall time overstates.
The generator's rate (pictures per second at 640x480) is printed for whoever makes training sets.

With --sequences N it also replays N freshly generated sequences (the four kinds in turn, new seeds,
JPEG quality 50/65/80/95 rotating over them) and counts those where the detector reported each
resting scene exactly once, 0.29 to 0.55 s after it came to rest, and nothing while a hand was in view.
"""

from __future__ import annotations

import argparse
import statistics
import time

import cv2
import numpy as np

from vision import synth
from vision.settle import SettleDetector


def medians(action, runs: int, per: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds per item over `runs` runs of `action`, which handles `per` items."""
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        action()
        walls.append((time.perf_counter() - wall) * 1000 / per)
        cpus.append((time.process_time() - cpu) * 1000 / per)
    return statistics.median(walls), statistics.median(cpus)


def throw(width: int, height: int) -> list[np.ndarray]:
    """A throw rendered at 320x240 and scaled up: the detector only sees a 160-pixel-wide copy."""
    scenes, _ = synth.sequence_scenes("single_throw", 500)
    return [cv2.resize(synth.render(scene), (width, height), interpolation=cv2.INTER_LINEAR) for scene in scenes]


def replay(name: str, seed: int, quality: int) -> tuple[bool, list[float], list[float]]:
    """Whether the detector got one generated sequence right, its event times and the rest times."""
    scenes, description = synth.sequence_scenes(name, seed)
    detector = SettleDetector()
    events = []
    for scene, t in zip(scenes, description["times"]):
        _, jpeg = cv2.imencode(".jpg", synth.render(scene), [cv2.IMWRITE_JPEG_QUALITY, quality])
        frame = cv2.imdecode(jpeg, cv2.IMREAD_COLOR)
        assert frame is not None
        if detector.update(frame, t):
            events.append(t)
    rests = description["rest_starts"]
    right = (len(events) == len(rests) and all(r + 0.29 <= e <= r + 0.55 for e, r in zip(events, rests))
             and not any(a <= e <= b for e in events for a, b in description["hand"]))
    return right, events, rests


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sequences", type=int, default=0, help="also replay this many generated sequences")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    print("settle detector, ms per frame (median of runs; wall / cpu), reference = cvtColor + GaussianBlur")
    for width, height in ((640, 480), (1280, 960), (2304, 1296)):
        frames = throw(width, height)

        def detect(frames=frames):
            detector = SettleDetector()
            for index, frame in enumerate(frames):
                detector.update(frame, index / 10)

        def reference(frames=frames):
            for frame in frames:
                cv2.GaussianBlur(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), (5, 5), 0)

        detect_wall, detect_cpu = medians(detect, args.runs, len(frames))
        ref_wall, ref_cpu = medians(reference, args.runs, len(frames))
        print(f"  {width}x{height}: {detect_wall:.2f} / {detect_cpu:.2f} ms   reference {ref_wall:.2f} / "
              f"{ref_cpu:.2f} ms   ratio {detect_cpu / ref_cpu:.2f}")
    count = 5
    wall, cpu = medians(lambda: [synth.render(synth.random_scene(seed, size=(640, 480))) for seed in range(count)],
                        max(args.runs // 2, 1), count)
    print(f"generator at 640x480: {1000 / wall:.2f} pictures/s wall, {1000 / cpu:.2f} pictures/s cpu")
    if args.sequences:
        right = 0
        for index in range(args.sequences):
            name = synth.SEQUENCES[index % len(synth.SEQUENCES)]
            seed = 1000 + index // len(synth.SEQUENCES)
            quality = (50, 65, 80, 95)[(index + index // len(synth.SEQUENCES)) % 4]  # every kind at every quality
            ok, events, rests = replay(name, seed, quality)
            right += ok
            if not ok:
                print(f"  wrong: {name} seed {seed} JPEG {quality}: events {events}, at rest from {rests}")
        print(f"settle on generated sequences: {right} of {args.sequences} right")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
