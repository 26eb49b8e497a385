"""Scenes planned from seeds, and their labels, without Blender."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.render.cli import main as render_main
from tools.render.geometry import footprint, polygons_overlap, top_face
from tools.render.labels import (
    COUNTED,
    prepare_folder,
    truth,
    write_labels,
    write_manifest,
    yolo_lines,
)
from tools.render.measure import CONDITIONS
from tools.render.plan import (
    LAPTOP_MM,
    LIGHTINGS,
    ONLY_CONDITIONS,
    SINGLE_CONDITIONS,
    TRAY_MATERIALS,
    plan_scene,
)
from tools.render.post import MIDDLE_GREY, develop, exposure_gain
from vision.labelled import load_folder

seeds = st.integers(0, 2**31 - 1)
slow = settings(deadline=None, max_examples=20, suppress_health_check=[HealthCheck.too_slow])


@slow
@given(seed=seeds)
def test_a_seed_always_plans_the_same_scene(seed):
    assert truth(plan_scene(seed), "a.jpg") == truth(plan_scene(seed), "a.jpg")


@slow
@given(seed=seeds)
def test_planned_dice_lie_in_the_tray_apart_and_in_the_picture(seed):
    scene = plan_scene(seed)
    assert 0 <= len(scene.dice) <= 6
    for i, planned in enumerate(scene.dice):
        die = planned.pose
        assert 12 <= die.size <= 19
        assert scene.tray.contains(die.corners()[:, :2]).all()
        assert abs(die.corners()[:, 2].min()) < 1e-9
        for other in scene.dice[i + 1:]:
            assert not polygons_overlap(footprint(die), footprint(other.pose), 0.04)
        pixels = scene.camera.project(top_face(die)[2])
        assert np.all(pixels >= 0) and np.all(pixels <= (scene.width, scene.height))


@slow
@given(seed=seeds)
def test_each_top_face_centre_lies_in_its_box_and_its_value_is_the_face_up(seed):
    scene = plan_scene(seed)
    label = truth(scene, "a.jpg")
    for planned, die in zip(scene.dice, label["dice"]):
        x0, y0, x1, y1 = die["box"]
        assert x0 <= die["x"] <= x1 and y0 <= die["y"] <= y1
        assert die["value"] == planned.pose.value
        assert die["cocked"] == (die["lean_deg"] > 1.0)
    assert label["values"] == sorted(d["value"] for d in label["dice"] if d["in_view"] >= COUNTED)
    assert (label["status"] == "unsure") == bool(label["problems"])


def test_cocked_dice_lean_on_a_wall_or_a_die_and_make_the_picture_unsure():
    leaning_on = {"cocked on wall": 0, "cocked on die": 0}
    for seed in range(400):
        scene = plan_scene(seed)
        label = truth(scene, "a.jpg")
        for planned in scene.dice:
            if not planned.cocked:
                continue
            leaning_on[planned.rests] += 1
            die = planned.pose
            assert label["status"] == "unsure"
            others = [d.pose for d in scene.dice if d is not planned]
            near_wall = not scene.tray.contains(die.corners()[:, :2], margin=0.3).all()
            near_die = any(polygons_overlap(footprint(die), footprint(o), 0.3) for o in others)
            assert near_wall if planned.rests == "cocked on wall" else near_die
        if len(leaning_on) and min(leaning_on.values()) >= 5:
            break
    assert min(leaning_on.values()) >= 5, leaning_on


def test_many_seeds_cover_every_condition_the_issue_names():
    labels = [truth(plan_scene(seed), "a.jpg") for seed in range(40)]
    conditions = [label["conditions"] for label in labels]
    assert {c["lighting"] for c in conditions} == set(LIGHTINGS)
    assert {c["tray"] for c in conditions} == set(TRAY_MATERIALS)
    assert {c["tray_shape"] for c in conditions} == {"rect", "round"}
    for flag in ("translucent", "touching", "cocked", "hand", "mixed_colours", "defocus"):
        assert any(c[flag] for c in conditions), flag
    assert max(c["tilt_deg"] for c in conditions) > 15
    assert {len(label["dice"]) for label in labels} == set(range(7))
    colours = {d["colour"] for label in labels for d in label["dice"]}
    assert colours == {"white", "ivory", "black", "red", "blue", "green", "yellow", "translucent"}
    assert {d["pips"] for label in labels for d in label["dice"]} == {"recessed", "painted"}


def test_labels_are_written_as_the_shared_photo_sets_and_read_back_alike(tmp_path):
    prepare_folder(tmp_path)
    written = []
    for seed in (3, 1, 2):
        label = truth(plan_scene(seed), f"render_{seed:06d}.jpg")
        cv2.imwrite(str(tmp_path / "images" / label["image"]), np.zeros((480, 640, 3), np.uint8))
        write_labels(tmp_path, label)
        written.append(label)
    assert write_manifest(tmp_path) == 3
    read = load_folder(tmp_path)
    assert [r.path.name for r in read] == [f"render_{s:06d}.jpg" for s in (1, 2, 3)]
    by_name = {label["image"]: label for label in written}
    for image in read:
        label = by_name[image.path.name]
        assert image.values == tuple(label["values"])
        assert image.expected_status == label["status"]
        boxes = image.boxes_in_pixels(640, 480)
        assert boxes is not None and len(boxes) == len(yolo_lines(label))
        for box, die in zip(boxes, [d for d in label["dice"] if d["in_view"] >= COUNTED]):
            assert box.value == die["value"]
            assert math.isclose(box.x, (die["box"][0] + die["box"][2]) / 2, abs_tol=0.01)
    assert json.loads((tmp_path / "truth" / "render_000001.json").read_text())["seed"] == 1
    assert [r.path.name for r in load_folder(tmp_path, split="train")] == ["render_000001.jpg", "render_000002.jpg",
                                                                          "render_000003.jpg"]
    assert load_folder(tmp_path, split="test") == []


def test_the_camera_exposes_to_middle_grey_and_more_gain_is_more_noise():
    rng = np.random.default_rng(0)
    light = rng.uniform(0.5, 1.5, (120, 160, 3)).astype(np.float32)
    assert math.isclose(float((light * exposure_gain(light, 0.0)).mean()), MIDDLE_GREY, rel_tol=0.05)
    flat = np.full((120, 160, 3), 0.3, np.float32)
    lit = replace(plan_scene(2).lens, exposure=0.0, gain=1.0, motion_blur=(0.0, 0.0))
    dim = replace(lit, gain=8.0)
    bright, dark = develop(flat, lit, seed=1).astype(float), develop(flat / 50, dim, seed=1).astype(float)
    assert abs(bright.mean() - dark.mean()) < 3
    assert 2.0 * bright.std() < dark.std() < 20
    assert np.array_equal(develop(flat, lit, seed=1), develop(flat, lit, seed=1))


def test_later_frames_of_a_still_scene_have_noise_of_their_own_and_the_first_is_as_it_always_was():
    flat = np.full((120, 160, 3), 0.05, np.float32)
    dim = replace(plan_scene(2).lens, exposure=0.0, gain=8.0, motion_blur=(0.0, 0.0))
    first, second, third = (develop(flat, dim, seed=1, frame=frame) for frame in (0, 1, 2))
    assert np.array_equal(first, develop(flat, dim, seed=1))
    assert not np.array_equal(first, second) and not np.array_equal(second, third)
    assert np.array_equal(second, develop(flat, dim, seed=1, frame=1))
    assert abs(first.mean() - second.mean()) < 1


@pytest.mark.parametrize("seed", [0, 7])
def test_tray_outline_surrounds_the_dice(seed):
    label = truth(plan_scene(seed), "a.jpg")
    rim = np.array(label["tray_outline"], np.float32)
    for die in label["dice"]:
        assert cv2.pointPolygonTest(rim, (die["x"], die["y"]), False) >= 0


def test_scenes_are_planned_for_one_condition_in_turn_or_all_for_the_one_asked():
    from tools.render.cli import condition_of

    assert [condition_of(seed, True) for seed in range(7)] == list(SINGLE_CONDITIONS)
    assert {condition_of(seed, False, "translucent dice") for seed in range(7)} == {"translucent dice"}
    assert condition_of(5, False) is None


@pytest.mark.parametrize("argv", [
    ["--conditions", "--only", "wood tray"],  # one or the other
    ["--only", "purple dice"],  # no such condition
])
def test_the_render_command_refuses_an_ambiguous_or_unknown_condition(argv, tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        render_main(["--out", str(tmp_path), *argv])
    assert stopped.value.code == 2 and "--only" in capsys.readouterr().err


@pytest.mark.parametrize("only", ONLY_CONDITIONS)
def test_a_scene_planned_for_one_condition_has_it_and_none_of_the_others(only):
    assert tuple(CONDITIONS) == SINGLE_CONDITIONS[1:]
    labels = [truth(plan_scene(seed, only=only), "a.jpg") for seed in range(12)]
    for label in labels:
        assert label["only"] == only and not label["conditions"]["hand"] and label["dice"]
        present = {name for name, has in CONDITIONS.items() if has(label["conditions"])}
        # a die set down apart may still come to lie within half a millimetre of another
        assert present - {only} <= {"touching dice"}, (label["seed"], present)
    has = CONDITIONS.get(only)
    if has is not None:
        assert sum(has(label["conditions"]) for label in labels) >= 10
    others = sum(bool({n for n, f in CONDITIONS.items() if f(lb["conditions"])} - {only}) for lb in labels)
    assert others <= 1


def test_marbled_dice_come_only_when_asked_for_so_batches_rendered_before_stay_as_they_were():
    marbled = [plan_scene(seed, only="marbled dice") for seed in range(12)]
    assert all(die.look.vein is not None and not die.look.translucent for scene in marbled for die in scene.dice)
    assert all(truth(scene, "a.jpg")["conditions"]["marbled"] for scene in marbled)
    for scene in [plan_scene(seed) for seed in range(40)] + [plan_scene(seed, only=only) for seed in range(3)
                                                              for only in SINGLE_CONDITIONS]:
        assert all(die.look.vein is None for die in scene.dice)
        assert not truth(scene, "a.jpg")["conditions"]["marbled"]


def test_a_felt_tray_from_above_is_a_phone_held_straight_over_a_round_felt_tray_of_white_dice():
    """Pictures like a player's phone photo into a round felt dice tray: white dice with coloured pips,
    the camera within 5 degrees of straight down, in focus, held still, in a lit room."""
    scenes = [plan_scene(seed, (2304, 1296), only="felt tray from above") for seed in range(16)]
    for scene in scenes:
        assert scene.tray.shape == "round" and scene.tray_material == "felt" and scene.tilt <= 5
        assert all(die.look.colour == "white" and not die.cocked for die in scene.dice)
        assert scene.lens.motion_blur[0] == 0 and scene.lens.fstop == 8.0
        assert scene.lighting not in ("dim room", "low hard light") and not scene.hand
    assert len({die.look.pip_colour for scene in scenes for die in scene.dice}) >= 3
    assert len({scene.tray_colour for scene in scenes}) >= 3  # felt of any colour, not one tray's


def _laptop_points(extra) -> np.ndarray:
    """Points spread over a laptop's top, on the desk's plane (world millimetres)."""
    (x, y, _), (yaw, _, _) = extra.points
    turn = math.radians(yaw)
    grid = np.stack(np.meshgrid(np.linspace(-0.5, 0.5, 11) * LAPTOP_MM[0], np.linspace(-0.5, 0.5, 11) * LAPTOP_MM[1]),
                    axis=-1).reshape(-1, 2)
    rotation = np.array([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])
    return np.column_stack([grid @ rotation.T + (x, y), np.zeros(len(grid))])


def test_dice_thrown_without_a_tray_lie_on_the_desk_with_a_laptop_or_a_cable_beside_them_never_on_them():
    scenes = [plan_scene(seed, only="no tray") for seed in range(16)]
    assert all(scene.tray.wall_height == 0 and truth(scene, "a.jpg")["conditions"]["tray"] == "none"
               for scene in scenes)
    kinds = [extra.kind for scene in scenes for extra in scene.extras]
    assert kinds.count("laptop") >= 4 and kinds.count("cable") >= 4
    for scene in scenes:
        for extra in scene.extras:
            points = _laptop_points(extra) if extra.kind == "laptop" else np.array(extra.points)
            pixels = scene.camera.project(points)
            assert np.any(np.all((pixels >= 0) & (pixels <= (scene.width, scene.height)), axis=1)), scene.seed
            if extra.kind == "laptop":
                (x, y, _), (yaw, _, _) = extra.points
                turn = math.radians(yaw)
                for planned in scene.dice:
                    dx, dy = planned.pose.x - x, planned.pose.y - y
                    along, across = dx * math.cos(turn) + dy * math.sin(turn), dy * math.cos(turn) - dx * math.sin(turn)
                    assert abs(along) > LAPTOP_MM[0] / 2 or abs(across) > LAPTOP_MM[1] / 2, scene.seed


def test_relabelling_a_folder_rewrites_its_labels_from_the_seeds(tmp_path):
    prepare_folder(tmp_path)
    for seed, only in ((4, None), (5, "cocked dice")):
        label = truth(plan_scene(seed, only=only), f"render_{seed:06d}.jpg")
        cv2.imwrite(str(tmp_path / "images" / label["image"]), np.zeros((480, 640, 3), np.uint8))
        write_labels(tmp_path, label)
    before = {p.name: p.read_text() for p in (tmp_path / "truth").iterdir()}
    spoilt = json.loads((tmp_path / "truth" / "render_000005.json").read_text())
    spoilt["values"], spoilt["dice"] = [], []
    (tmp_path / "truth" / "render_000005.json").write_text(json.dumps(spoilt))
    (tmp_path / "labels" / "render_000004.txt").write_text("")
    assert render_main(["--out", str(tmp_path), "--relabel"]) == 0
    assert {p.name: p.read_text() for p in (tmp_path / "truth").iterdir()} == before
    assert (tmp_path / "labels" / "render_000004.txt").read_text().count("\n") == len(yolo_lines(
        json.loads(before["render_000004.json"])))
    assert len(load_folder(tmp_path)) == 2


def test_the_contact_sheet_draws_each_picture_with_its_dice_beside_it(tmp_path):
    from tools.render.contact import CROP, TILE, sheet

    prepare_folder(tmp_path)
    for seed in (1, 2, 3):
        label = truth(plan_scene(seed), f"render_{seed:06d}.jpg")
        cv2.imwrite(str(tmp_path / "images" / label["image"]), np.full((480, 640, 3), 90, np.uint8))
        write_labels(tmp_path, label)
    picture = sheet(tmp_path, first=0, count=3)
    assert picture.shape == (2 * TILE[1], 2 * (TILE[0] + 2 * CROP), 3)
    assert (picture[:TILE[1], :TILE[0]] != 90).any()  # the labels are drawn on the picture
    with pytest.raises(ValueError, match="no truth files"):
        sheet(tmp_path, first=5, count=3)


def test_a_scene_planned_larger_is_the_same_scene_in_more_pixels():
    """The table camera's 1280x960 frame of a seed shows what its 640x480 picture shows, twice as
    large; camera shake, an angle, spans twice the pixels."""
    for seed in range(40):
        small, large = truth(plan_scene(seed), "a.jpg"), truth(plan_scene(seed, (1280, 960)), "a.jpg")
        assert (large["values"], large["status"]) == (small["values"], small["status"]), seed
    shaken = next(seed for seed in range(100) if plan_scene(seed).lens.motion_blur[0] > 0)
    small, large = truth(plan_scene(shaken), "a.jpg"), truth(plan_scene(shaken, (1280, 960)), "a.jpg")
    assert (large["width"], large["height"]) == (1280, 960)
    for die_small, die_large in zip(small["dice"], large["dice"]):
        assert die_large["size"] == pytest.approx(2 * die_small["size"], rel=0.01)
        assert (die_large["x"], die_large["y"]) == pytest.approx((2 * die_small["x"], 2 * die_small["y"]), abs=1.5)
    blur_small, blur_large = small["conditions"]["motion_blur_px"], large["conditions"]["motion_blur_px"]
    assert blur_large == pytest.approx(2 * blur_small, abs=0.15)  # each rounded to 0.1 px


@pytest.mark.parametrize("size", ["1280", "widexhigh", "32x32"])
def test_the_render_command_refuses_a_size_that_is_not_width_x_height(size, tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        render_main(["--out", str(tmp_path), "--size", size])
    assert stopped.value.code == 2 and "--size" in capsys.readouterr().err
