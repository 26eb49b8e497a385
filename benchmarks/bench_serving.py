"""Serving under abuse: four tablets playing while other clients hold 200 event streams, 50 camera
streams and 300 idle or half-sent connections open.

    .venv/bin/python benchmarks/bench_serving.py [--seconds 20] [--runs 1] [--phases idle,reference,one,spread]
                                                 [--server-cpu 0.2]

It starts the real `yacht-table serve` (demo camera replaying samples/, a fresh data directory) on a
free loopback port and runs, for each of `--runs`:

- idle: nobody connected, for 5 s: the table's own cost (the demo camera's frames read and shown);
- reference: the four tablets alone (each from its own address, 127.0.0.2-5) for --seconds / 2;
- one: the abuse all from one address (127.0.0.9), as the issue tried it, for --seconds;
- spread: the same abuse spread over 550 addresses (127.0.1.x-127.0.3.x), as many devices would
  do, so per-address limits cannot help and the serving model itself must carry it;
- and after each abuse phase, 5 s with every abusive connection closed at once.

A tablet loops: GET /api/state, then a write with the version it saw (new game, roll, record or
undo), 0.2 s apart, each with a 5 s timeout. A stale_version or rule refusal (409) is an answer; a
timeout, a dropped connection, a 5xx or a 429 is an error. Idle connections send nothing;
half-sent ones send part of a request's headers and a byte every 5 s after. The abuser reads its
streams, and reopens whatever the server closes (at most 100 a second).

Printed per phase: tablet requests, p50/p95/max latency in ms, errors, the abusive connections open
at the end and how many were closed by the server, and the server process's CPU use (share of one
core) and resident memory.

--server-cpu F runs the server in a cgroup (v1 cpu controller; needs root) allowed F of one core's
time, every 10 ms: a stand-in for a slower machine (0.2 for a Raspberry Pi 4-class board, about five
times slower a core, but here with one core instead of four: a pessimistic stand-in).

Loopback only; the whole run stops by itself within about runs x (2.5 x seconds + 20) seconds plus
the server's start.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import resource
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLET_ADDRESSES = [f"127.0.0.{n}" for n in (2, 3, 4, 5)]
ABUSER_ADDRESS = "127.0.0.9"
REQUEST_TIMEOUT = 5.0
TABLET_PAUSE = 0.2
EVENT_STREAMS, CAMERA_STREAMS, IDLE, HALF_SENT = 200, 50, 150, 150
REOPENS_PER_SECOND = 100
AFTERMATH_SECONDS = 5.0


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ServerProcess:
    """`yacht-table serve` in a child process, with its CPU time and memory read from /proc."""

    def __init__(self, data_dir: str, cpu_share: float | None = None):
        self.port = free_port()
        self.cgroup: Path | None = None
        command = [sys.executable, "-m", "webui.cli", "serve", "--host", "127.0.0.1",
                   "--port", str(self.port), "--camera", f"replay:{ROOT / 'samples' / 'images'}",
                   "--data-dir", data_dir]
        self.process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        if cpu_share is not None:
            self.limit_cpu(cpu_share)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                connection.request("GET", "/api/state")
                if connection.getresponse().status == 200:
                    connection.close()
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("the table did not start within 60 s")

    def limit_cpu(self, share: float) -> None:
        self.cgroup = Path(f"/sys/fs/cgroup/cpu/yacht-bench-{os.getpid()}")
        self.cgroup.mkdir()
        period = 10_000
        (self.cgroup / "cpu.cfs_period_us").write_text(str(period))
        (self.cgroup / "cpu.cfs_quota_us").write_text(str(round(share * period)))
        (self.cgroup / "cgroup.procs").write_text(str(self.process.pid))

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def resident_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.cgroup is not None:
            self.cgroup.rmdir()


@dataclass
class TabletLog:
    latencies: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


class Tablet(threading.Thread):
    """Plays the shared game like a tablet: reads the state, then taps with the version it saw."""

    def __init__(self, port: int, address: str, seed: int):
        super().__init__(daemon=True)
        self.port, self.address = port, address
        self.random = random.Random(seed)
        self.log = TabletLog()
        self.running = threading.Event()
        self.stopped = threading.Event()
        self.connection: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: dict | None = None) -> dict | None:
        started = time.monotonic()
        try:
            if self.connection is None:
                self.connection = http.client.HTTPConnection(
                    "127.0.0.1", self.port, timeout=REQUEST_TIMEOUT, source_address=(self.address, 0))
            headers = {"Content-Type": "application/json",
                       "Origin": f"http://127.0.0.1:{self.port}"} if body is not None else {}
            self.connection.request(method, path, body=None if body is None else json.dumps(body),
                                    headers={"Host": f"127.0.0.1:{self.port}", **headers})
            response = self.connection.getresponse()
            payload = response.read()
            status = response.status
        except (OSError, http.client.HTTPException) as error:
            if self.running.is_set():
                self.log.latencies.append(time.monotonic() - started)
                self.log.error("timeout" if isinstance(error, TimeoutError) else type(error).__name__)
            if self.connection is not None:
                self.connection.close()
            self.connection = None
            return None
        if self.running.is_set():
            self.log.latencies.append(time.monotonic() - started)
            if status >= 500 or status == 429 or (400 <= status < 500 and status != 409):
                self.log.error(f"HTTP {status}")
        return json.loads(payload) if status < 300 else None

    def run(self) -> None:
        while not self.stopped.is_set():
            state = self.request("GET", "/api/state")
            if state is not None:
                self.request("POST", *self.next_tap(state))
            self.stopped.wait(TABLET_PAUSE)

    def next_tap(self, state: dict) -> tuple[str, dict]:
        version, game = state["version"], state["game"]
        if game is None or game["is_over"]:
            return "/api/games", {"players": ["Ana", "Ben"], "version": version}
        choice = self.random.random()
        if choice < 0.1 and game["history"]:
            return "/api/undo", {"version": version}
        if game["roll_number"] == 0 or (game["rolls_left"] and choice < 0.5):
            dice = [self.random.randint(1, 6) for _ in range(5)]
            return "/api/roll", {"dice": dice, "version": version}
        category = self.random.choice(sorted(game["open_scores"]))
        return "/api/record", {"category": category, "version": version}


@dataclass
class Slot:
    """One abusive connection the abuser keeps open: its kind and source address."""
    kind: str  # "events", "camera", "idle", "half"
    address: str
    sock: socket.socket | None = None
    last_trickle: float = 0.0


class Abuser(threading.Thread):
    """Holds the abusive connections open from one thread, reading the streams it opened and
    reopening (rate-limited) whatever the server closes."""

    def __init__(self, port: int, addresses: list[str]):
        super().__init__(daemon=True)
        self.port = port
        kinds = ["events"] * EVENT_STREAMS + ["camera"] * CAMERA_STREAMS + ["idle"] * IDLE + ["half"] * HALF_SENT
        self.slots = [Slot(kind, addresses[i % len(addresses)]) for i, kind in enumerate(kinds)]
        self.selector = selectors.DefaultSelector()
        self.stopped = threading.Event()
        self.closed_by_server = 0
        self.refused = 0

    def open(self, slot: Slot) -> None:
        sock = socket.socket()
        sock.setblocking(False)
        try:
            sock.bind((slot.address, 0))
            sock.connect_ex(("127.0.0.1", self.port))
        except OSError:
            sock.close()
            self.refused += 1
            return
        slot.sock = sock
        host = f"Host: 127.0.0.1:{self.port}\r\n"
        request = {"events": f"GET /api/events HTTP/1.1\r\n{host}\r\n",
                   "camera": f"GET /api/camera.mjpg HTTP/1.1\r\n{host}\r\n",
                   "idle": "", "half": f"GET /api/state HTTP/1.1\r\n{host}X-Slow: "}[slot.kind]
        slot.last_trickle = time.monotonic()
        self.selector.register(sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if request else 0),
                               (slot, request.encode()))

    def drop(self, slot: Slot) -> None:
        if slot.sock is not None:
            self.selector.unregister(slot.sock)
            slot.sock.close()
            slot.sock = None

    def open_count(self) -> int:
        return sum(slot.sock is not None for slot in self.slots)

    def run(self) -> None:
        budget, budget_time = REOPENS_PER_SECOND, time.monotonic()
        for slot in self.slots:
            self.open(slot)
        while not self.stopped.is_set():
            for key, events in self.selector.select(timeout=0.2):
                slot, pending = key.data
                sock = slot.sock
                if sock is None:
                    continue
                try:
                    if events & selectors.EVENT_WRITE and pending:
                        sent = sock.send(pending)
                        pending = pending[sent:]
                        self.selector.modify(sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if pending else 0),
                                             (slot, pending))
                    if events & selectors.EVENT_READ and not sock.recv(65536):
                        raise ConnectionResetError
                except BlockingIOError:
                    pass
                except OSError:
                    self.closed_by_server += 1
                    self.drop(slot)
            now = time.monotonic()
            if now - budget_time >= 1.0:
                budget, budget_time = REOPENS_PER_SECOND, now
            for slot in self.slots:
                if slot.sock is None and budget > 0:
                    budget -= 1
                    self.open(slot)
                elif slot.sock is not None and slot.kind == "half" and now - slot.last_trickle > 5.0:
                    slot.last_trickle = now
                    try:
                        slot.sock.send(b"x")
                    except OSError:
                        pass
        for slot in self.slots:
            self.drop(slot)


def run_phase(server: ServerProcess, name: str, seconds: float, abuser_addresses: list[str] | None,
              seed: int) -> list[dict]:
    tablets = [Tablet(server.port, address, seed + n) for n, address in enumerate(TABLET_ADDRESSES)]
    for tablet in tablets:
        tablet.start()
    abuser = Abuser(server.port, abuser_addresses) if abuser_addresses else None
    if abuser is not None:
        abuser.start()
    results = [measure(server, tablets, name, seconds, abuser)]
    if abuser is not None:
        abuser.stopped.set()
        abuser.join()  # every abusive connection closed at once
        results.append(measure(server, tablets, f"{name}, after", AFTERMATH_SECONDS, None))
    for tablet in tablets:
        tablet.stopped.set()
    for tablet in tablets:
        tablet.join()
    return results


def measure(server: ServerProcess, tablets: list[Tablet], name: str, seconds: float,
            abuser: Abuser | None) -> dict:
    for tablet in tablets:
        tablet.log = TabletLog()
        tablet.running.set()
    cpu, started = server.cpu_seconds(), time.monotonic()
    time.sleep(seconds)
    for tablet in tablets:
        tablet.running.clear()
    cpu_share = (server.cpu_seconds() - cpu) / (time.monotonic() - started)
    latencies = [value for tablet in tablets for value in tablet.log.latencies]
    errors: dict[str, int] = {}
    for tablet in tablets:
        for kind, count in tablet.log.errors.items():
            errors[kind] = errors.get(kind, 0) + count
    return {
        "phase": name, "requests": len(latencies),
        "p50": percentile(latencies, 0.5) * 1000 if latencies else float("nan"),
        "p95": percentile(latencies, 0.95) * 1000 if latencies else float("nan"),
        "max": max(latencies) * 1000 if latencies else float("nan"),
        "errors": errors, "cpu": cpu_share, "rss": server.resident_mb(), "seconds": seconds,
        "open": abuser.open_count() if abuser else None,
        "closed": abuser.closed_by_server if abuser else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each abuse phase")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--phases", default="idle,reference,one,spread")
    parser.add_argument("--server-cpu", type=float, help="share of one core the server may use")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    spread = [f"127.0.{1 + n // 250}.{1 + n % 250}" for n in range(EVENT_STREAMS + CAMERA_STREAMS + IDLE + HALF_SENT)]
    phases = {"idle": None, "reference": None, "one": [ABUSER_ADDRESS], "spread": spread}
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as data_dir:
        server = ServerProcess(data_dir, args.server_cpu)
        try:
            for run in range(args.runs):
                for name in args.phases.split(","):
                    if name == "idle":
                        rows.append(measure(server, [], name, AFTERMATH_SECONDS, None))
                        continue
                    seconds = args.seconds / 2 if name == "reference" else args.seconds
                    rows += run_phase(server, name, seconds, phases[name], seed=run * 100)
        finally:
            server.stop()
    print(f"{'phase':<16}{'requests':>9}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}  {'cpu':>5}{'MB':>6}"
          f"  {'abuse open':>10}{'closed':>7}  errors")
    for row in rows:
        opened = "" if row["open"] is None else f"{row['open']}/{len(spread)}"
        closed = "" if row["closed"] is None else str(row["closed"])
        print(f"{row['phase']:<16}{row['requests']:>9}{row['p50']:>9.1f}{row['p95']:>9.1f}{row['max']:>9.1f}"
              f"  {row['cpu']:>5.2f}{row['rss']:>6.0f}  {opened:>10}{closed:>7}  {row['errors'] or 'none'}")
    by_phase: dict[str, list[float]] = {}
    for row in rows:
        by_phase.setdefault(row["phase"], []).append(row["p95"])
    idle = [row for row in rows if row["phase"] == "idle"]
    reference_rows = [row for row in rows if row["phase"] == "reference"]
    if idle and reference_rows:
        per_request = statistics.median(
            (row["cpu"] - idle[0]["cpu"]) * row["seconds"] / row["requests"] * 1000 for row in reference_rows)
        print(f"server CPU per tablet request (reference less idle): {per_request:.2f} ms")
    if args.runs > 1:
        print("median p95 over runs: " + ", ".join(
            f"{name} {statistics.median(values):.1f} ms" for name, values in by_phase.items()))
    reference = statistics.median(by_phase.get("reference", [float("nan")]))
    print("p95 against the tablets alone: " + ", ".join(
        f"{name} x{statistics.median(values) / reference:.2f}" for name, values in by_phase.items()
        if name not in ("reference", "idle")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
