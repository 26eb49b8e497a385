"""`yacht-table score`, `--help` and `--version`, through the installed console command."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from webui.cli import main

CONSOLE = shutil.which("yacht-table", path=str(Path(sys.executable).parent))


def run(*args):
    return subprocess.run([CONSOLE, *args], capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(CONSOLE is None, reason="the yacht-table console command is not installed")
def test_console_command_scores_one_category():
    result = run("score", "4,4,4,4,1", "four_of_a_kind")
    assert (result.returncode, result.stdout, result.stderr) == (0, "17\n", "")


def test_all_twelve_categories(capsys):
    assert main(["score", "4,4,4,4,1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 12
    assert lines[0].split() == ["yacht", "0"]
    assert lines[3].split() == ["four_of_a_kind", "17"]
    assert lines[-1].split() == ["ones", "1"]


def test_json_output(capsys):
    assert main(["score", "3,3,3,6,6", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["dice"] == [3, 3, 3, 6, 6]
    assert data["scores"]["full_house"] == 21
    assert main(["score", "3-3-3-6-6", "full_house", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "dice": [3, 3, 3, 6, 6], "category": "full_house", "score": 21}


@pytest.mark.parametrize(
    "args, message",
    [
        (["score", "4,4,4,7,1"], "die 4 must be from 1 to 6, got 7"),
        (["score", "4,4,4,4"], "exactly 5 dice, got 4"),
        (["score", "4,4,x,4,1"], "whole numbers from 1 to 6, got 'x'"),
        (["score", "4,4,4,4,1", "bonus"], "unknown category 'bonus'"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_2(capsys, args, message):
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err
    assert len(captured.err.strip().splitlines()) == 1


def test_help_and_version(capsys):
    for flag in ("--help", "--version"):
        with pytest.raises(SystemExit) as exit_info:
            main([flag])
        assert exit_info.value.code == 0
    output = capsys.readouterr().out
    assert "score" in output
    assert "yacht-table 0.1.0" in output
