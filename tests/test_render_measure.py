"""Scoring the reader on rendered pictures: missed dice and cocked dice taken for flat ones."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.render.measure import judge, report
from vision import Die, Problem, Reading


def _label(cocked: bool) -> dict:
    dice = [{"value": 3, "box": [10, 10, 40, 40], "in_view": 1.0, "cocked": False},
            {"value": 5, "box": [100, 100, 130, 130], "in_view": 1.0, "cocked": cocked},
            {"value": 2, "box": [200, 10, 230, 40], "in_view": 0.3, "cocked": False}]
    conditions = {"wood_tray": True, "hard_shadow": False, "translucent": False, "touching": False,
                  "tilt_deg": 8.0, "cocked": cocked, "glare": False, "lighting": "warm bulb", "hand": False,
                  "defocus": False, "motion_blur_px": 0.0, "die_px": 30.0}
    return {"dice": dice, "values": [3, 5], "status": "unsure" if cocked else "ok", "conditions": conditions}


def test_a_die_with_nothing_read_in_its_box_is_missed_and_one_mostly_hidden_is_not_counted():
    reading = Reading((Die(3, 25, 25, 30, 0, 0.9),), "ok")
    outcome = judge(_label(cocked=False), reading)
    assert (outcome.dice, outcome.missed, outcome.exact) == (2, 1, False)
    outcome = judge(_label(cocked=False), Reading((Die(3, 25, 25, 30, 0, 0.9), Die(5, 115, 112, 30, 0, 0.9)), "ok"))
    assert (outcome.missed, outcome.exact, outcome.said_unsure) == (0, True, False)


def test_a_cocked_die_read_without_doubt_is_taken_for_flat_and_one_doubted_there_is_not():
    dice = (Die(3, 25, 25, 30, 0, 0.9), Die(5, 115, 112, 30, 0, 0.9))
    assert judge(_label(cocked=True), Reading(dice, "ok")).cocked_as_flat == 1
    doubted = Reading(dice, "unsure", (Problem("looks like 5", "doubtful", 5, (116.0, 113.0)),))
    assert judge(_label(cocked=True), doubted).cocked_as_flat == 0
    elsewhere = Reading(dice, "unsure", (Problem("looks like 3", "doubtful", 3, (25.0, 25.0)),))
    assert judge(_label(cocked=True), elsewhere).cocked_as_flat == 1


def test_the_report_counts_each_condition_with_and_alone():
    outcomes = [judge(_label(cocked=False), Reading((Die(3, 25, 25, 30, 0, 0.9),), "ok")),
                judge(_label(cocked=True), Reading((Die(5, 115, 112, 30, 0, 0.9),), "ok"))]
    lines = {line[:24].strip(): line for line in report(outcomes)}
    assert lines["wood tray"].split()[2] == "2"
    assert lines["wood tray alone"].split()[3] == "0"
    assert "cocked read as flat 1/1" in lines["cocked dice"]


def test_marbled_dice_have_a_row_of_their_own_and_batches_rendered_before_it_none():
    plain = _label(cocked=False)  # rendered before marbled dice came: its conditions do not say
    marbled = {**plain, "conditions": {**plain["conditions"], "marbled": True}}
    read = Reading((Die(3, 25, 25, 30, 0, 0.9), Die(5, 115, 112, 30, 0, 0.9)), "ok")
    lines = {line[:24].strip(): line for line in report([judge(plain, read), judge(marbled, read)])}
    assert lines["marbled dice"].split()[2] == "1"
    assert lines["all"].split()[1] == "2"


def test_only_pictures_whose_dice_are_all_large_enough_are_read_with_min_die(tmp_path):
    import cv2
    import numpy as np

    from tools.render.labels import prepare_folder, truth, write_labels
    from tools.render.measure import read_folder
    from tools.render.plan import plan_scene

    prepare_folder(tmp_path)
    sizes = {}
    for seed in (1, 2, 3, 4):
        label = truth(plan_scene(seed), f"render_{seed:06d}.jpg")
        cv2.imwrite(str(tmp_path / "images" / label["image"]), np.full((480, 640, 3), 120, np.uint8))
        write_labels(tmp_path, label)
        sizes[seed] = label["conditions"]["die_px"]
    threshold = sorted(sizes.values())[2]
    assert len(read_folder(tmp_path, with_tray=False)) == 4
    assert len(read_folder(tmp_path, with_tray=True, min_die=threshold)) == sum(v >= threshold for v in sizes.values())
    assert len(read_folder(tmp_path, with_tray=False, from_seed=3)) == 2


def test_with_still_frames_each_picture_is_read_from_the_mean_of_its_later_frames(tmp_path):
    import cv2
    import numpy as np

    import tools.render.measure as measure
    from tools.render.cli import later_frame
    from tools.render.labels import prepare_folder, truth, write_labels
    from tools.render.plan import plan_scene

    prepare_folder(tmp_path)
    for seed, frames in ((1, 3), (2, 2)):  # the second picture's third frame is missing: not read
        label = truth(plan_scene(seed), f"render_{seed:06d}.jpg")
        cv2.imwrite(str(tmp_path / "images" / label["image"]), np.full((480, 640, 3), 200, np.uint8))
        for frame in range(1, frames):
            path = later_frame(tmp_path, label["image"], frame)
            path.parent.mkdir(exist_ok=True)
            cv2.imwrite(str(path), np.full((480, 640, 3), 90 + 20 * frame, np.uint8))
        write_labels(tmp_path, label)

    class Seen:
        def __init__(self):
            self.frames = []

        def read(self, image, tray=None):
            self.frames.append(image)
            return Reading((), "ok")

    seen = Seen()
    assert len(measure.read_folder(tmp_path, with_tray=False, reader=seen, still_frames=3)) == 1
    assert int(seen.frames[0].mean()) == 120  # frames 1 and 2 (110, 130); the first, 200, moved


def test_each_flat_die_is_read_right_left_unread_misread_or_missed_and_counted_by_kind():
    label = _label(cocked=False)
    label["dice"].append({"value": 6, "box": [300, 300, 330, 330], "in_view": 1.0, "cocked": False})
    label["dice"].append({"value": 1, "box": [400, 300, 430, 330], "in_view": 1.0, "cocked": False})
    unread = Problem("the die at (115, 112) could not be read", "unreadable", None, (115.0, 112.0))
    reading = Reading((Die(3, 25, 25, 30, 0, 0.9), Die(None, 115, 112, 30, 0, 0.0), Die(4, 315, 315, 30, 0, 0.9)),
                      "unsure", (unread,))
    outcome = judge(label, reading)
    assert outcome.flat_dice == ("right", "unread", "misread", "missed")
    translucent = {**label, "conditions": {**label["conditions"], "translucent": True}}
    lines = {line[:24].strip(): line for line in report([outcome, judge(translucent, reading)])}
    assert lines["flat dice, opaque"].split()[3:8] == ["4", "1", "1", "1", "1"]
    assert lines["flat dice, translucent"].split()[3:8] == ["4", "1", "1", "1", "1"]


def test_a_cocked_die_is_no_flat_die():
    dice = (Die(3, 25, 25, 30, 0, 0.9), Die(5, 115, 112, 30, 0, 0.9))
    assert judge(_label(cocked=True), Reading(dice, "ok")).flat_dice == ("right",)
