"""Camera benchmark: how fast a camera fault is noticed and recovered, and what calibration and replay cost.

    .venv/bin/python benchmarks/bench_camera.py [--runs 5]

Fault figures use the real CameraSupervisor with its default timings (stall 1.5 s, retry 0.5 s doubling
to 5 s) over the scripted FakeCamera: the target is offline within 2 s. Per-frame costs are medians,
printed with their ratio to a reference measured in the same run (BGR to grey conversion of the same
1280x960 frame), so machines of different speeds can be compared.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from hardware.calibrate import find_tray_region
from hardware.camera import ReplayCamera
from hardware.fake_camera import FakeCamera, blank_image
from hardware.supervisor import CameraState, CameraSupervisor


def wait_for(condition, timeout: float = 15.0) -> float:
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            raise RuntimeError("benchmark condition not reached")
        time.sleep(0.005)
    return time.monotonic() - start


def fault_latencies(fault: str) -> tuple[float, float]:
    """Seconds from the fault to 'offline', and from the repair to 'live' again."""
    fake = FakeCamera([blank_image()], frame_interval=1 / 30)
    with CameraSupervisor(fake.open, source="fake") as supervisor:
        wait_for(lambda: supervisor.status.state is CameraState.LIVE)
        (fake.stall if fault == "stall" else fake.unplug)()
        offline = wait_for(lambda: supervisor.status.state is CameraState.OFFLINE)
        (fake.resume if fault == "stall" else fake.plug_in)()
        back = wait_for(lambda: supervisor.status.state is CameraState.LIVE)
    return offline, back


def median_time(action, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def tray_frame() -> np.ndarray:
    rng = np.random.default_rng(0)
    image = np.empty((960, 1280, 3), dtype=np.int16)
    image[:] = (40, 80, 130)
    image[120:860, 180:1100] = (60, 140, 50)
    image += rng.integers(-8, 9, image.shape, dtype=np.int16)
    return np.clip(image, 0, 255).astype(np.uint8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    logging.getLogger("hardware.supervisor").setLevel(logging.ERROR)  # the faults are on purpose

    for fault in ("stall", "unplug"):
        results = [fault_latencies(fault) for _ in range(args.runs)]
        offline = [r[0] for r in results]
        back = [r[1] for r in results]
        print(f"{fault:>6}: offline after median {statistics.median(offline):.2f} s (max {max(offline):.2f} s, "
              f"target < 2 s); live again after median {statistics.median(back):.2f} s (max {max(back):.2f} s)")

    frame = tray_frame()
    reference = median_time(lambda: cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), args.runs * 20)
    print(f"reference: BGR to grey of 1280x960, median {reference * 1000:.2f} ms")
    tray = median_time(lambda: find_tray_region(frame), args.runs * 4)
    print(f"find_tray_region 1280x960: median {tray * 1000:.1f} ms ({tray / reference:.0f}x reference)")
    with tempfile.TemporaryDirectory() as folder:
        cv2.imwrite(str(Path(folder) / "tray.jpg"), frame, [cv2.IMWRITE_JPEG_QUALITY, 85])
        camera = ReplayCamera(folder, fps=1e6)
        read = median_time(camera.read, args.runs * 10)
    print(f"replay read of a 1280x960 JPEG: median {read * 1000:.1f} ms ({read / reference:.0f}x reference)")


if __name__ == "__main__":
    main()
