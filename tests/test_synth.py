"""The sample generator: dice that are real dice, pictures that repeat, labels that match the files."""

import csv
import json
import math
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision import synth

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

poses = st.builds(
    synth.DieSpec,
    value=st.integers(1, 6),
    x=st.floats(-100, 100),
    y=st.floats(-100, 100),
    size=st.floats(10, 25),
    yaw=st.floats(0, 360),
    colour=st.just("white"),
    pips=st.just("black"),
    tilt=st.floats(0, 40),
    tilt_axis=st.floats(0, 360),
)


@settings(deadline=None, max_examples=60)  # a shared 2-core machine is slow at times
@given(poses)
def test_opposite_faces_sum_to_seven_in_any_pose(die):
    faces = die.faces()
    for value, normal, _ in faces:
        opposite = [v for v, n, _ in faces if np.dot(n, normal) < -0.999]
        assert opposite == [7 - value]


@settings(deadline=None, max_examples=60)  # a shared 2-core machine is slow at times
@given(poses)
def test_one_two_three_run_counter_clockwise_round_their_corner(die):
    normals = {value: normal for value, normal, _ in die.faces()}
    assert np.linalg.det(np.stack([normals[1], normals[2], normals[3]])) > 0.99


@settings(deadline=None, max_examples=60)  # a shared 2-core machine is slow at times
@given(poses)
def test_the_chosen_face_is_up_unless_the_die_leans_past_45_degrees(die):
    assert die.top_value() == die.value
    assert die.corners()[:, 2].min() == pytest.approx(0, abs=1e-9)


@pytest.mark.parametrize("value", range(1, 7))
def test_each_layout_is_the_standard_point_symmetric_pattern(value):
    pips = synth.PIP_LAYOUTS[value]
    assert len(set(pips)) == value
    assert sorted(pips) == sorted((-x, -y) for x, y in pips)  # every d6 face looks the same turned 180 deg
    assert ((0, 0) in pips) == (value % 2 == 1)
    assert all(max(abs(x), abs(y)) <= 0.5 for x, y in pips)


@pytest.mark.parametrize("value", range(1, 7))
@pytest.mark.parametrize("marble", [None, 5, 6])
def test_a_face_texture_shows_as_many_pips_as_its_value(value, marble):
    colour, alpha = synth.face_texture(value, (230, 230, 230), (20, 20, 20), marble)
    dark = ((colour.mean(axis=2) < 100) & (alpha > 0.5)).astype(np.uint8)
    count, _ = cv2.connectedComponents(dark)
    assert count - 1 == value


def test_a_scene_renders_the_same_picture_from_the_same_seed():
    first = synth.render(synth.random_scene(7, size=(320, 240)))
    again = synth.render(synth.random_scene(7, size=(320, 240)))
    other = synth.render(synth.random_scene(8, size=(320, 240)))
    assert first.shape == (240, 320, 3) and first.dtype == np.uint8
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other)


def test_each_die_is_drawn_where_its_label_says():
    scene = synth.random_scene(3, size=(640, 480), dice_count=5)
    scene = replace(scene, glare=(), noise_sigma=0.0, blur_sigma=0.0)
    empty = synth.render(replace(scene, dice=()))
    image = synth.render(scene)
    label = synth.truth(scene, "x.jpg")
    assert len(label["dice"]) == 5
    for die in label["dice"]:
        x, y, half = int(die["x"]), int(die["y"]), int(die["size"] * 0.3)
        window = np.s_[y - half:y + half, x - half:x + half]
        patch = np.abs(image[window].astype(int) - empty[window])
        assert patch.mean() > 10, f"nothing drawn at the label of {die}"


def test_dice_never_overlap_and_stay_inside_the_tray():
    rng = np.random.default_rng(1)
    tray = (300.0, 220.0)
    spots = synth.place_dice(rng, 12, tray, 18.0, touching=0.6)
    dice = [synth.DieSpec(1, x, y, 18.0, yaw, "white", "black") for x, y, yaw in spots]
    assert len(dice) == 12
    for i, a in enumerate(dice):
        assert np.all(np.abs(a.corners()[:, 0]) <= tray[0] / 2 + 1e-6)
        assert np.all(np.abs(a.corners()[:, 1]) <= tray[1] / 2 + 1e-6)
        for b in dice[i + 1:]:
            assert not synth._squares_overlap(a, b, 0.0)
    nearest = [min(math.hypot(a.x - b.x, a.y - b.y) for b in dice if b is not a) for a in dice]
    assert min(nearest) < 18.0 * 1.1, "touching dice were asked for"


def test_light_dice_get_dark_pips_and_dark_dice_light_pips():
    rng = np.random.default_rng(2)
    for _ in range(200):
        die, pips, _, marbled = synth.pick_colours(rng)
        assert synth.DIE_COLOURS[die][1] != synth.PIP_COLOURS[pips][1]
        assert not marbled


def test_the_training_variety_adds_red_pips_on_dark_dice_and_marbled_dice():
    rng = np.random.default_rng(2)
    picked = [synth.pick_colours(rng, variety=True) for _ in range(400)]
    red_on_dark = [die for die, pips, _, _ in picked if pips == "red" and not synth.DIE_COLOURS[die][1]]
    assert len(red_on_dark) >= 20 and "red" not in red_on_dark
    assert 40 <= sum(marbled for *_, marbled in picked) <= 200
    assert all(die != pips for die, pips, _, _ in picked)


def test_every_committed_sample_is_still_the_scene_its_seed_makes():
    plan = {seed: distraction for _, seed, distraction in synth.sample_plan(len(_manifest()), 0)}
    for row in _manifest():
        label = json.loads((SAMPLES / "truth" / f"{Path(row['image']).stem}.json").read_text())
        scene = synth.random_scene(label["seed"], plan[label["seed"]])
        assert synth.truth(scene, row["image"]) | {"seed": label["seed"]} == label
        assert not any(die.marbled for die in scene.dice)


def test_a_cocked_die_or_a_hand_or_blur_makes_the_expected_reading_unsure():
    for distraction in synth.DISTRACTIONS:
        label = synth.truth(synth.random_scene(11, distraction, dice_count=5), "x.jpg")
        assert label["status"] == "unsure" and label["problems"]
    assert synth.truth(synth.random_scene(11, dice_count=5), "x.jpg")["status"] == "ok"
    with pytest.raises(ValueError, match="unknown distraction"):
        synth.random_scene(1, "smoke")


def test_an_empty_tray_blurred_by_motion_is_expected_to_read_as_it_is():
    """Blur makes dice doubtful; with none in the tray there is nothing to read wrong: no dice, ok."""
    label = synth.truth(synth.random_scene(11, "motion_blur", dice_count=0), "x.jpg")
    assert label["status"] == "ok" and label["problems"] == [] and label["values"] == []


def test_the_command_writes_pictures_labels_and_manifest(tmp_path):
    assert synth.main(["--out", str(tmp_path), "--count", "2", "--first-seed", "40", "--jobs", "2"]) == 0
    rows = list(csv.DictReader(open(tmp_path / "manifest.csv")))
    assert [r["image"] for r in rows] == ["synth_00040.jpg", "synth_00041.jpg"]
    for seed, row in zip((40, 41), rows):
        assert cv2.imread(str(tmp_path / "images" / row["image"])) is not None
        written = json.loads((tmp_path / "truth" / f"synth_{seed:05d}.json").read_text())
        assert written == synth.truth(synth.random_scene(seed), row["image"]) | {"seed": seed}
    with pytest.raises(SystemExit):
        synth.main(["--out", str(tmp_path), "--count", "-1"])


# --- the committed samples/ folder --------------------------------------------------------------------


def _manifest():
    if not (SAMPLES / "manifest.csv").exists():
        pytest.fail("samples/manifest.csv is missing: run python -m vision.synth --out samples --sequences")
    return list(csv.DictReader(open(SAMPLES / "manifest.csv")))


def test_the_manifest_lists_exactly_the_sample_images_with_their_truth():
    rows = _manifest()
    assert {r["image"] for r in rows} == {p.name for p in (SAMPLES / "images").glob("*.jpg")}
    assert {r["status"] for r in rows} == {"ok", "unsure"}
    for row in rows:
        stem = Path(row["image"]).stem
        label = json.loads((SAMPLES / "truth" / f"{stem}.json").read_text())
        values = [int(v) for v in row["values"].split("-")] if row["values"] else []
        assert values == sorted(values) == label["values"] == sorted(d["value"] for d in label["dice"])
        assert row["status"] == label["status"]
        yolo = (SAMPLES / "labels" / f"{stem}.txt").read_text().split("\n")
        assert sorted(int(line.split()[0]) + 1 for line in yolo if line) == values
        height, width = cv2.imread(str(SAMPLES / "images" / row["image"])).shape[:2]
        assert (width, height) == (label["width"], label["height"])


def test_a_committed_sample_is_what_its_seed_renders_now():
    row = _manifest()[1]
    label = json.loads((SAMPLES / "truth" / f"{Path(row['image']).stem}.json").read_text())
    name, seed, distraction = next(p for p in synth.sample_plan(label["seed"] + 1, 0) if p[1] == label["seed"])
    scene = synth.random_scene(seed, distraction)
    assert synth.truth(scene, row["image"]) | {"seed": seed} == label
    # JPEG drops the fine sensor noise; compared smoothed, only compression loss remains
    stored = cv2.GaussianBlur(cv2.imread(str(SAMPLES / "images" / row["image"])), (0, 0), 2).astype(int)
    fresh = cv2.GaussianBlur(synth.render(scene), (0, 0), 2).astype(int)
    assert np.abs(stored - fresh).mean() < 1.5


def test_the_sequences_have_their_frames_and_rising_times():
    folders = sorted((SAMPLES / "sequences").iterdir())
    assert [f.name for f in folders] == sorted(synth.SEQUENCES)
    for folder in folders:
        description = json.loads((folder / "sequence.json").read_text())
        assert len(description["frames"]) == len(description["times"]) > 10
        assert all(b > a for a, b in zip(description["times"], description["times"][1:]))
        assert all((folder / name).is_file() for name in description["frames"])
        assert len(description["values_at_rest"]) == len(description["rest_starts"]) >= 1
