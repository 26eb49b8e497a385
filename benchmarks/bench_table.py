"""Table service benchmark: settled frame to SSE event latency, and GET /api/state throughput.

    .venv/bin/python benchmarks/bench_table.py [--throws 12] [--runs 5] [--requests 400] [--clients 4]

1. Latency: the generated two-throw sequence (samples/sequences/two_throws) is fed frame by frame
   into the table loop at its recorded times, over and over, with one client listening on
   /api/events through the table's own server (webui.server). For each throw the detector reports, the time runs
   from the moment the settling frame enters `TableLoop.process` to the moment the client has the
   event carrying that reading. Printed: median and p95, and the same for `read_dice` alone on the
   same frames (the reference: what is left is the table's own cost).
2. Throughput: `--clients` threads each with a keep-alive connection send `--requests` GETs in all;
   requests per second for /api/state (with a game under way) and, as the reference in the same
   run, for a route answering `{}` through the same app, guards and server. Median of `--runs`.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

import cv2

from hardware.fake_camera import FakeCamera
from scorer.actions import Roll
from scorer.advisor import Advisor
from vision import read_dice
from webui.app import create_app
from webui.engine import NewGame, Settings, open_engine
from webui.server import serving_in_thread

SEQUENCE = Path(__file__).resolve().parent.parent / "samples" / "sequences" / "two_throws"


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


class Server:
    """The table's own HTTP server on a background thread, as `yacht-table serve` runs it."""

    def __init__(self, app):
        self._serving = serving_in_thread(app)
        self.port = self._serving.__enter__().port

    def close(self):
        self._serving.__exit__(None, None, None)


class EventListener(threading.Thread):
    """Reads /api/events, noting when each state version arrives."""

    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.connection.request("GET", "/api/events")
        self.response = self.connection.getresponse()
        self.arrivals: dict[int, float] = {}
        self.arrived = threading.Condition()

    def run(self):
        try:
            while True:
                line = self.response.fp.readline()
                if not line:
                    return
                if line.startswith(b"id: "):
                    received = time.perf_counter()
                    with self.arrived:
                        self.arrivals[int(line[4:])] = received
                        self.arrived.notify_all()
        except OSError:
            return

    def arrival_of(self, version: int, timeout: float = 30.0) -> float:
        with self.arrived:
            if not self.arrived.wait_for(lambda: version in self.arrivals, timeout):
                raise RuntimeError(f"state {version} did not reach the event stream within {timeout} s")
            return self.arrivals[version]


def measure_latency(throws: int, advisor: Advisor) -> tuple[list[float], list[float]]:
    description = json.loads((SEQUENCE / "sequence.json").read_text())
    frames = [cv2.imread(str(SEQUENCE / name)) for name in description["frames"]]
    length = description["times"][-1] + 1.0 / description["fps"]
    reader_times: list[float] = []

    def timed_reader(image):
        start = time.perf_counter()
        reading = read_dice(image)
        reader_times.append(time.perf_counter() - start)
        return reading

    with tempfile.TemporaryDirectory() as data_dir:
        # The loop is driven frame by frame here: its camera is never opened.
        engine = open_engine(Settings(data_dir=Path(data_dir), camera="replay:bench"), open_camera=FakeCamera().open,
                             advisor=advisor, start=False, read_dice=timed_reader)
        app = create_app(engine)
        loop, service = engine.loop, engine.table
        assert loop is not None
        server = Server(app)
        listener = EventListener(server.port)
        listener.start()
        latencies: list[float] = []
        lap = 0
        try:
            while len(latencies) < throws:
                for image, t in zip(frames, description["times"]):
                    before = len(reader_times)
                    entered = time.perf_counter()
                    loop.process(_Frame(image, t + lap * length))
                    if len(reader_times) > before:
                        # the reading is the loop's last change in this step
                        latencies.append(listener.arrival_of(service.version) - entered)
                lap += 1
        finally:
            engine.close()
            server.close()
    return latencies[:throws], reader_times[:throws]


class _Frame:
    def __init__(self, image, timestamp):
        self.image = image
        self.timestamp = timestamp


def requests_per_second(port: int, path: str, total: int, clients: int) -> float:
    def client(count: int):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for _ in range(count):
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                raise RuntimeError(f"GET {path} answered {response.status}")
        connection.close()

    threads = [threading.Thread(target=client, args=(total // clients,)) for _ in range(clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return (total // clients) * clients / (time.perf_counter() - start)


def measure_throughput(runs: int, total: int, clients: int, advisor: Advisor) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as data_dir:
        engine = open_engine(Settings(data_dir=Path(data_dir), camera="off"), advisor=advisor)
        app = create_app(engine)
        app.add_url_rule("/bench/empty", "bench_empty", lambda: {})
        service = engine.table
        service.apply(service.version, NewGame(["Ana", "Ben"]))
        service.apply(service.version, Roll([2, 3, 3, 5, 6]))
        server = Server(app)
        try:
            state, empty = [], []
            for _ in range(runs):
                state.append(requests_per_second(server.port, "/api/state", total, clients))
                empty.append(requests_per_second(server.port, "/bench/empty", total, clients))
        finally:
            engine.close()
            server.close()
    return statistics.median(state), statistics.median(empty)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--throws", type=int, default=12)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    advisor = Advisor.build()

    latencies, reads = measure_latency(args.throws, advisor)
    own = [total - read for total, read in zip(latencies, reads)]
    print(f"settled frame -> SSE event, {len(latencies)} throws:")
    for label, seconds, note in (("total    ", latencies, ""), ("read_dice", reads, "  (reference)"),
                                 ("the rest ", own, "")):
        print(f"  {label}  median {statistics.median(seconds) * 1000:8.1f} ms   "
              f"p95 {percentile(seconds, 0.95) * 1000:8.1f} ms{note}")
    print(f"  ratio total / read_dice (medians): {statistics.median(latencies) / statistics.median(reads):.2f}")

    state, empty = measure_throughput(args.runs, args.requests, args.clients, advisor)
    print(f"GET throughput, {args.clients} keep-alive clients, median of {args.runs} runs of {args.requests}:")
    print(f"  /api/state   {state:8.0f} requests/s")
    print(f"  empty route  {empty:8.0f} requests/s  (reference)")
    print(f"  ratio state / empty: {state / empty:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
