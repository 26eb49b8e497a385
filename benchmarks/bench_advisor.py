"""Advisor benchmark: table build time, cache load time, advice latency, simulation throughput.

    .venv/bin/python benchmarks/bench_advisor.py [--runs 7] [--positions 2000] [--games 20000]

Runs on one core (BLAS threads pinned to 1 before numpy loads). Every time is the median of several
runs, printed with its ratio to a reference workload timed in the same run (pure-Python scoring of
all 252 throws in all 12 categories), so figures from machines of different speeds can be compared.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from itertools import combinations_with_replacement  # noqa: E402

import numpy as np  # noqa: E402

from scorer.advisor import Advisor, solve_expected_rest  # noqa: E402
from scorer.rules import CATEGORIES, score  # noqa: E402


def median_seconds(action, runs: int) -> tuple[float, float]:
    """Median wall time and median CPU time of `runs` calls. On a busy machine the CPU time is the
    steadier figure; on an idle one the two agree."""
    wall, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        action()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def score_every_throw() -> None:
    for throw in combinations_with_replacement(range(1, 7), 5):
        for category in CATEGORIES:
            score(throw, category)


def random_positions(count: int, seed: int):
    rng = np.random.default_rng(seed)
    positions = []
    for _ in range(count):
        used = [c for c in CATEGORIES if rng.random() < rng.random()]
        if len(used) == len(CATEGORIES):
            used.pop()
        positions.append((used, rng.integers(1, 7, 5).tolist(), int(rng.integers(1, 4))))
    return positions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--positions", type=int, default=2000)
    parser.add_argument("--games", type=int, default=20_000)
    args = parser.parse_args()

    reference, reference_cpu = median_seconds(score_every_throw, args.runs)
    print(f"reference (score 252 throws x 12 categories in Python): {reference * 1e3:.1f} ms "
          f"(cpu {reference_cpu * 1e3:.1f} ms)")

    build, build_cpu = median_seconds(solve_expected_rest, args.runs)
    print(f"table build: {build * 1e3:.0f} ms, cpu {build_cpu * 1e3:.0f} ms  "
          f"({build / reference:.1f}x reference)")

    with tempfile.TemporaryDirectory() as cache_dir:
        Advisor.load(cache_dir)
        load, _ = median_seconds(lambda: Advisor.load(cache_dir), args.runs)
        advisor = Advisor.load(cache_dir)
    print(f"cache load: {load * 1e3:.2f} ms  ({load / reference:.2f}x reference)")
    print(f"optimal expected score of a game: {advisor.expected_game:.2f}")

    positions = random_positions(args.positions, seed=1)
    for used, dice, roll in positions[:50]:  # warm-up
        advisor.advise(used, dice, roll)
    wall: dict[int, list[float]] = {1: [], 2: [], 3: []}
    cpu: dict[int, list[float]] = {1: [], 2: [], 3: []}
    for used, dice, roll in positions:
        start, start_cpu = time.perf_counter(), time.process_time()
        advisor.advise(used, dice, roll)
        wall[roll].append(time.perf_counter() - start)
        cpu[roll].append(time.process_time() - start_cpu)
    print(f"advice latency over {len(positions)} random positions (wall; cpu):")
    for label, rolls in [("all rolls", (1, 2, 3)), ("roll 1", (1,)), ("roll 2", (2,)), ("roll 3", (3,))]:
        walls = [t for roll in rolls for t in wall[roll]]
        cpus = [t for roll in rolls for t in cpu[roll]]
        print(f"    {label}: median {np.median(walls) * 1e3:.2f} ms, p99 "
              f"{np.percentile(walls, 99) * 1e3:.2f} ms; cpu median {np.median(cpus) * 1e3:.2f} ms, "
              f"p99 {np.percentile(cpus, 99) * 1e3:.2f} ms  ({len(walls)} positions, median "
              f"{np.median(walls) / reference:.4f}x reference)")

    simulation_runs = max(1, args.runs // 2)
    for strategy in ("optimal", "greedy"):
        seconds, cpu_seconds = median_seconds(
            lambda: advisor.simulate(args.games, strategy, seed=5), simulation_runs
        )
        totals = advisor.simulate(args.games, strategy, seed=5)
        error = totals.std(ddof=1) / np.sqrt(len(totals))
        print(f"simulate {strategy}: {args.games / seconds:,.0f} games/s "
              f"({seconds:.2f} s, cpu {cpu_seconds:.2f} s for {args.games} games, median of {simulation_runs}, "
              f"{seconds / reference:.0f}x reference); mean {totals.mean():.2f} "
              f"sd {totals.std(ddof=1):.2f} se {error:.2f}")


if __name__ == "__main__":
    main()
