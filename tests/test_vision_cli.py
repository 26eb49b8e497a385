"""`yacht-table read`: the JSON-lines contract other tools rely on, errors per file, --annotate."""

import json
import subprocess
import sys
from pathlib import Path

import cv2
import pytest
from test_reader import roll

from webui.cli import main

KEYS = {"image", "status", "values", "dice", "problems", "ms"}


@pytest.fixture
def pictures(tmp_path):
    good = tmp_path / "roll.png"
    cv2.imwrite(str(good), roll([2, 3, 3, 6, 6]))
    corrupt = tmp_path / "corrupt.jpg"
    corrupt.write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    text = tmp_path / "notes.txt"
    text.write_text("four fives and a one")
    return good, corrupt, text, tmp_path / "missing.png"


def test_json_lines_in_order_with_errors_per_file_and_exit_status_1(pictures, capsys):
    good, corrupt, text, missing = pictures
    paths = [str(missing), str(good), str(corrupt), str(text)]
    status = main(["read", *paths, "--json"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert status == 1
    assert [line["image"] for line in lines] == paths
    assert all(set(line) == KEYS for line in lines)
    assert [line["status"] for line in lines] == ["error", lines[1]["status"], "error", "error"]
    assert lines[1]["status"] in ("ok", "unsure")
    for error in (lines[0], lines[2], lines[3]):
        assert error["problems"] and error["values"] == [] and error["dice"] == []
    read = lines[1]
    assert read["values"] == sorted(read["values"])
    assert read["ms"] > 0
    for die in read["dice"]:
        assert set(die) == {"value", "x", "y", "confidence"}
        assert 0.0 <= die["confidence"] <= 1.0


def test_all_pictures_read_gives_exit_status_0(pictures, capsys):
    good = pictures[0]
    assert main(["read", str(good), "--json"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1


def test_human_lines_name_the_picture_and_the_error(pictures, capsys):
    good, corrupt, _, missing = pictures
    main(["read", str(good), str(missing), str(corrupt)])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(f"{good}: ")
    assert lines[1] == f"{missing}: error: no such file"
    assert "error" in lines[2] and "decode" in lines[2]


def test_annotate_writes_each_picture_read(pictures, tmp_path, capsys):
    good, corrupt, _, _ = pictures
    out = tmp_path / "drawn"
    main(["read", str(good), str(corrupt), "--annotate", str(out)])
    written = sorted(p.name for p in out.iterdir())
    assert written == ["roll.png"]
    drawn = cv2.imread(str(out / "roll.png"))
    assert drawn is not None and drawn.shape == cv2.imread(str(good)).shape


def test_annotate_into_a_file_is_a_clear_command_line_error(pictures, capsys):
    good = pictures[0]
    assert main(["read", str(good), "--annotate", str(good)]) == 2
    assert "--annotate" in capsys.readouterr().err


def test_the_installed_command_prints_the_same_contract(pictures):
    good, _, _, missing = pictures
    done = subprocess.run(
        [sys.executable, "-m", "webui.cli", "read", str(good), str(missing), "--json"],
        capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent, timeout=120,
    )
    assert done.returncode == 1, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["status"] for line in lines][1] == "error"
    assert lines[0]["image"] == str(good)


def test_tray_reads_only_the_dice_on_it(tmp_path, capsys):
    picture = tmp_path / "two.png"
    cv2.imwrite(str(picture), roll([2, 5]))  # the two at x=200, the five at x=420
    assert main(["read", str(picture), "--json", "--tray", "330,100,200,400"]) == 0
    assert json.loads(capsys.readouterr().out)["values"] == [5]
    assert main(["read", str(picture), "--json", "--tray", "100,100,250,100,250,400,100,400"]) == 0
    assert json.loads(capsys.readouterr().out)["values"] == [2]


def test_a_tray_that_is_no_outline_is_a_command_line_error(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["read", "x.png", "--tray", "1,2,3"])
    assert "x,y,width,height" in capsys.readouterr().err


def test_a_picture_too_small_for_a_die_is_an_error_that_says_so(tmp_path, capsys):
    tiny = tmp_path / "tiny.png"
    cv2.imwrite(str(tiny), roll([2])[:100, :120])
    assert main(["read", str(tiny), "--json"]) == 1
    line = json.loads(capsys.readouterr().out)
    assert line["status"] == "error" and "too small to hold a readable die" in line["problems"][0]
