"""tools/pseudo_label.py: pictures of a table's dice, read by the reader, written as a labelled folder
the trainers read (docs/training.md, "Learning a table's own dice")."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from tools.pseudo_label import main
from vision.labelled import load_folder

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


@pytest.fixture
def throws(tmp_path: Path) -> Path:
    folder = tmp_path / "throws"
    folder.mkdir()
    for name in ("synth_00001.jpg", "synth_00005_hand.jpg"):  # read `ok`; a hand in the tray, `unsure`
        shutil.copy(SAMPLES / "images" / name, folder / name)
    (folder / "torn.jpg").write_bytes(b"\xff\xd8 not a whole picture")
    return folder


def test_pictures_read_ok_become_labelled_pictures_and_the_rest_are_left_out(throws, tmp_path, capsys):
    out = tmp_path / "own"
    main([str(throws), "--out", str(out)])

    (labelled,) = load_folder(out, split="train")
    assert labelled.path.resolve() == (throws / "synth_00001.jpg").resolve()
    assert labelled.values == (1, 3, 4, 4, 6)
    assert labelled.expected_status == "ok"
    truth = json.loads((SAMPLES / "truth" / "synth_00001.json").read_text())
    boxes = labelled.boxes_in_pixels(truth["width"], truth["height"])
    assert boxes is not None and sorted(box.value for box in boxes) == [1, 3, 4, 4, 6]
    for die in truth["dice"]:
        # Each die boxed round its own face, about 1.3 times the face's side, with its own value.
        (box,) = [b for b in boxes if math.dist((b.x, b.y), (die["x"], die["y"])) < 0.25 * die["size"]]
        assert box.value == die["value"]
        assert 1.0 * die["size"] < box.width < 1.6 * die["size"]
    printed = capsys.readouterr()
    assert "torn.jpg: not a picture, left out" in printed.err
    assert "1 of 3 pictures read `ok`, 5 dice" in printed.out


def test_a_second_round_into_the_same_folder_leaves_nothing_of_the_first(throws, tmp_path):
    out = tmp_path / "own"
    main([str(throws), "--out", str(out)])
    (throws / "synth_00001.jpg").unlink()
    shutil.copy(SAMPLES / "images" / "synth_00004.jpg", throws / "synth_00004.jpg")
    main([str(throws), "--out", str(out)])

    (labelled,) = load_folder(out)
    assert labelled.values == (4,)
    assert len(list((out / "images").iterdir())) == len(list((out / "labels").iterdir())) == 1


def test_a_folder_without_pictures_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="no pictures in"):
        main([str(tmp_path), "--out", str(tmp_path / "own")])
