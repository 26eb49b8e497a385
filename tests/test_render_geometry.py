"""The rendered dice's geometry, without Blender: pips, how dice rest, what the camera sees."""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.render.geometry import (
    Capsule,
    Tray,
    focal_pixels,
    leaning,
    pip_centres,
    pushed_until,
    top_face,
    visible_fraction,
)
from vision.synth import Camera, DieSpec, look_at


def test_each_face_carries_its_value_in_pips_on_its_own_plane():
    pips = pip_centres(16.0, spread=1.05)
    assert len(pips) == 21
    for value in range(1, 7):
        on_face = [(n, p) for v, n, p in pips if v == value]
        assert len(on_face) == value
        for normal, point in on_face:
            assert math.isclose(float(point @ normal), 8.0)
            assert np.all(np.abs(point) <= 8.0 + 1e-9)


def test_opposite_faces_sum_to_seven_and_one_two_three_turn_right_handed():
    normal_of = {v: n for v, n, _ in pip_centres(16.0)}
    for value in range(1, 7):
        assert np.allclose(normal_of[value], -normal_of[7 - value])
    assert float(np.cross(normal_of[1], normal_of[2]) @ normal_of[3]) > 0


@given(value=st.integers(1, 6), yaw=st.floats(0, 360), tilt=st.floats(0, 40))
def test_the_planned_value_faces_up_at_every_yaw_and_lean(value, yaw, tilt):
    die = replace(leaning(value, 15.0, yaw, tilt), yaw=yaw)
    shown, normal, _ = top_face(die)
    assert shown == value
    assert math.isclose(math.degrees(math.acos(min(1.0, normal[2]))), tilt, abs_tol=1e-6)


@given(towards=st.floats(0, 360), tilt=st.floats(5, 40))
def test_a_cocked_die_rests_on_an_edge_and_leans_the_way_it_was_told(towards, tilt):
    die = leaning(3, 15.0, towards, tilt)
    corners = die.corners()
    assert np.sum(corners[:, 2] < 1e-6) == 2
    _, normal, _ = top_face(die)
    direction = np.array([math.cos(math.radians(towards)), math.sin(math.radians(towards))])
    assert float(normal[:2] @ direction) > 0.99 * math.sin(math.radians(tilt))


def test_pushed_until_a_wall_touches_it_within_a_tenth_of_a_millimetre():
    tray = Tray("round", (200.0, 200.0), 20.0, 10.0)
    die = leaning(5, 16.0, 0.0, 30.0)
    rest = pushed_until(die, np.array([1.0, 0.0]), lambda d: bool(tray.contains(d.corners()[:, :2]).all()), far=150)
    assert rest is not None
    reach = float(np.hypot(*rest.corners()[:, :2].T).max())
    assert 100.0 - 0.1 <= reach <= 100.0


def _overhead(height: float = 300.0, width: int = 640, px: int = 480) -> Camera:
    position = np.array([0.0, 0.0, height])
    return Camera(look_at(position, np.zeros(3), 0.0), position, focal_pixels(width, px), width, px)


def test_a_die_alone_in_view_is_wholly_seen_and_one_under_a_hand_is_not():
    tray = Tray("rect", (300.0, 220.0), 25.0, 12.0)
    die = DieSpec(4, 10.0, -5.0, 16.0, 20.0, "", "")
    camera = _overhead()
    assert visible_fraction(camera, die, [], tray) == 1.0
    hand = Capsule((-200.0, -5.0, 60.0), (10.0, -5.0, 60.0), 25.0)
    assert visible_fraction(camera, die, [], tray, [hand]) == 0.0
    # its edge, seen from the lens, over the die's middle: x = 10 * (300 - 60) / (300 - 16) at z = 60
    half_hand = Capsule((-200.0, -5.0, 60.0), (10.0 * 240 / 284 - 25.0, -5.0, 60.0), 25.0)
    assert 0.3 < visible_fraction(camera, die, [], tray, [half_hand]) < 0.7


def test_a_wall_hides_the_die_behind_it_from_a_tilted_camera():
    tray = Tray("rect", (300.0, 220.0), 35.0, 12.0)
    die = DieSpec(2, 140.0, 0.0, 14.0, 0.0, "", "")  # against the +x wall
    far_side = np.array([-300.0, 0.0, 150.0])
    camera = Camera(look_at(far_side, np.array([100.0, 0.0, 0.0]), 0.0), far_side, 600.0, 640, 480)
    assert visible_fraction(camera, die, [], tray) == 1.0
    near_side = np.array([400.0, 0.0, 120.0])
    camera = Camera(look_at(near_side, np.array([100.0, 0.0, 0.0]), 0.0), near_side, 600.0, 640, 480)
    assert visible_fraction(camera, die, [], tray) < 1.0


@settings(deadline=None, max_examples=30)
@given(height=st.floats(150, 450), x=st.floats(-60, 60), y=st.floats(-40, 40), yaw=st.floats(0, 360))
def test_the_pi_camera_sees_a_die_at_the_size_its_lens_gives(height, x, y, yaw):
    camera = _overhead(height)
    die = DieSpec(1, x, y, 16.0, yaw, "", "")
    _, _, corners = top_face(die)
    side = np.linalg.norm(np.diff(camera.project(corners)[:2], axis=0))
    # 4.74 mm lens over 1.4 um pixels binned from 4608 to 640 across the 4:3 crop
    assert math.isclose(side, 16.0 * focal_pixels(640, 480) / (height - 16.0), rel_tol=1e-6)
    assert 600 < focal_pixels(640, 480) < 650
