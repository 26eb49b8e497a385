"""Blender renders what the plan says and the labels say where: pips counted in each labelled box.
Needs the `render` extra (bpy); skipped without it."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

pytest.importorskip("bpy", reason="Blender's bpy is not installed: pip install -e '.[render]' to test rendering")

from tools.render.blender import render_linear
from tools.render.geometry import Tray, focal_pixels
from tools.render.labels import truth
from tools.render.plan import DieLook, Lens, Light, PlannedDie, plan_scene
from tools.render.post import develop
from vision.synth import Camera, DieSpec, look_at


def _row_of_dice(pips: str, yaw: float) -> list[PlannedDie]:
    look = DieLook("white", (0.8, 0.8, 0.77), "black", pips, 0.3, 1.6, 1.35, 1.0)
    return [PlannedDie(DieSpec(value, -75.0 + 30.0 * (value - 1), 8.0 * (value % 2), 16.0, yaw + 13 * value, "", ""),
                       look, "flat") for value in range(1, 7)]


@pytest.mark.parametrize("pips", ["recessed", "painted"])
def test_each_labelled_box_holds_as_many_pips_as_its_value(pips):
    position = np.array([0.0, 0.0, 220.0])
    scene = replace(
        plan_scene(5),
        tray=Tray("rect", (260.0, 200.0), 20.0, 10.0), tray_material="felt", tray_colour=(0.03, 0.16, 0.05),
        dice=tuple(_row_of_dice(pips, 10.0)), lighting="soft overhead",
        lights=(Light("AREA", (100.0, 50.0, 1200.0), 800.0, 300.0, (1.0, 1.0, 1.0)),), ambient=(0.2, 0.2, 0.2),
        camera=Camera(look_at(position, np.zeros(3), 0.0), position, focal_pixels(640, 480), 640, 480),
        tilt=0.0, hand=(), extras=(),
        lens=Lens(focal_pixels(640, 480), 8.0, 204.0, (0.0, 0.0), 0.0, 1.0, 0.5, 95),
    )
    picture = develop(render_linear(scene, samples=8), scene.lens, seed=0)
    label = truth(scene, "a.jpg")
    grey = cv2.cvtColor(picture, cv2.COLOR_BGR2GRAY)
    for die in label["dice"]:
        corners = np.array(die["corners"], np.float32)
        centre = corners.mean(axis=0)
        inner = (centre + (corners - centre) * 0.85).astype(np.int32)
        mask = np.zeros_like(grey)
        cv2.fillConvexPoly(mask, inner, 255)
        dark = ((grey < 0.5 * np.median(grey[mask > 0])) & (mask > 0)).astype(np.uint8)
        _, _, stats, _ = cv2.connectedComponentsWithStats(dark)
        pips_seen = sum(1 for area in stats[1:, cv2.CC_STAT_AREA] if area >= 6)
        assert pips_seen == die["value"], (pips, die)
