"""SIGKILL the real server mid-game, start it again: every answered action is still there, at most
the one in flight is lost, and the database is intact."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from table_helpers import http_json

from scorer import CATEGORIES, Game

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ServerProcess:
    """`yacht-table serve` as a child process with its own data and config directories."""

    def __init__(self, tmp_path: Path) -> None:
        self.data_dir = tmp_path / "data"
        self.env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"), PYTHONUNBUFFERED="1")
        self.env.pop("YACHT_TABLE_CONFIG", None)
        self.process: subprocess.Popen | None = None
        self.url = ""

    def start(self) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.process = process = subprocess.Popen(
            [sys.executable, "-m", "webui.cli", "serve", "--camera", "off", "--port", str(port),
             "--data-dir", str(self.data_dir)],
            env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise AssertionError(f"the server exited: {process.communicate()[1].decode()}")
            try:
                if http_json("GET", f"{self.url}/api/state", timeout=2)[0] == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("the server did not answer within 60 s")

    def kill(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        self.process.stderr.close()

    def terminate(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        if self.process is not None and self.process.stderr is not None:
            self.process.stderr.close()


def planned_actions(players: int) -> list[dict]:
    """A whole game's worth of rolls and records: two rolls a turn, every category in order."""
    actions = []
    for turn, category in enumerate(CATEGORIES):
        for player in range(players):
            actions.append({"path": "/api/roll", "dice": [(turn + player) % 6 + 1, 2, 3, 4, 5]})
            actions.append({"path": "/api/roll", "dice": [6, 6, (turn * 5 + player) % 6 + 1, 1, 1]})
            actions.append({"path": "/api/record", "category": category})
    return actions


def expected_after(players: list[str], actions: list[dict], count: int) -> Game:
    game = Game(players)
    for action in actions[:count]:
        if action["path"] == "/api/roll":
            game.roll(action["dice"])
        else:
            game.record(action["category"])
    return game


class Driver(threading.Thread):
    """Plays the planned actions one after another, counting those sent and those answered."""

    def __init__(self, url: str, actions: list[dict], version: int, start_at: int):
        super().__init__(daemon=True)
        self.url, self.actions, self.version = url, actions, version
        self.sent = self.answered = start_at

    def run(self) -> None:
        for action in self.actions[self.answered:]:
            body = {k: v for k, v in action.items() if k != "path"} | {"version": self.version}
            self.sent += 1
            try:
                status, state = http_json("POST", self.url + action["path"], body, timeout=5)
            except OSError:
                return
            assert status == 200, state
            self.version = state["version"]
            self.answered += 1


def test_sigkill_mid_game_loses_at_most_the_action_in_flight(tmp_path):
    server = ServerProcess(tmp_path)
    players = ["Ana", "Ben"]
    actions = planned_actions(len(players))
    answered = 0
    try:
        server.start()
        _, state = http_json("GET", f"{server.url}/api/state")
        status, state = http_json("POST", f"{server.url}/api/games",
                                  {"players": players, "version": state["version"]})
        assert status == 201
        for kill_after in (12, 31):
            driver = Driver(server.url, actions, state["version"], answered)
            driver.start()
            while driver.answered < kill_after and driver.is_alive():
                time.sleep(0.002)
            server.kill()  # while the driver is sending its next action
            driver.join(timeout=10)
            answered, sent = driver.answered, driver.sent
            assert answered >= kill_after, "the driver stopped before the kill (see its thread's error)"

            database = sqlite3.connect(server.data_dir / "games.sqlite3")
            assert database.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            database.close()

            server.start()
            _, state = http_json("GET", f"{server.url}/api/state")
            game = state["game"]
            survivors = [expected_after(players, actions, count) for count in {answered, sent}]
            assert any(game["sheets"] == g.sheets and game["dice"] == (list(g.dice) if g.dice else None)
                       and game["roll_number"] == g.roll_number for g in survivors), (answered, sent, game)
            replayed = len(game["history"]) * 3 + game["roll_number"]
            answered = replayed  # the in-flight action, if it was journaled, now counts as answered
    finally:
        server.terminate()


def test_sigterm_with_a_tablet_watching_ends_its_stream_and_stops_cleanly(tmp_path):
    """systemd stops the table with SIGTERM while tablets hold their live-update streams open: the
    server must end those streams itself, not wait for them to time out, and leave no traceback in
    the journal."""
    server = ServerProcess(tmp_path)
    server.start()
    stream = urllib.request.urlopen(f"{server.url}/api/events", timeout=10)
    try:
        assert stream.readline().startswith(b"retry:")  # the stream is open and being served
        assert server.process is not None and server.process.stderr is not None
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=20)
        errors = server.process.stderr.read().decode()
    finally:
        stream.close()
        server.terminate()
    assert server.process.returncode == 0
    assert "Traceback" not in errors and "ERROR" not in errors, errors
    assert "still running" not in errors, errors  # a stream outlived the stop
