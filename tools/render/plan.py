"""A whole scene planned from a seed, without Blender: the tray and the table, the dice and how they
lie, the lights, the camera and what the camera does to the picture afterwards.

Everything is in tray millimetres (x, y on the tray floor, z up, origin at the floor's middle) and in
linear RGB; the same seed always plans the same scene.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from vision.synth import Camera, DieSpec, look_at

from .geometry import (
    Capsule,
    Tray,
    focal_pixels,
    footprint,
    leaning,
    polygons_overlap,
    pushed_until,
    top_face,
)

SIZE = (640, 480)

# Linear RGB. Each die colour lists the pip colours such dice are sold with.
DIE_COLOURS: dict[str, tuple[tuple[float, float, float], tuple[str, ...]]] = {
    "white": ((0.80, 0.80, 0.77), ("black", "black", "red", "blue")),
    "ivory": ((0.75, 0.62, 0.42), ("black", "red")),
    "black": ((0.012, 0.012, 0.013), ("white", "white", "yellow", "red")),
    "red": ((0.50, 0.020, 0.022), ("white", "white", "black")),
    "blue": ((0.020, 0.060, 0.42), ("white", "white", "yellow")),
    "green": ((0.025, 0.25, 0.045), ("white", "black", "yellow")),
    "yellow": ((0.82, 0.56, 0.025), ("black", "black", "red")),
    "translucent": ((0.0, 0.0, 0.0), ("white", "black")),  # tinted below
}
TRANSLUCENT_TINTS: dict[str, tuple[float, float, float]] = {
    "clear": (0.92, 0.92, 0.92), "red": (0.85, 0.06, 0.05), "blue": (0.10, 0.25, 0.90),
    "green": (0.10, 0.75, 0.20), "amber": (0.95, 0.50, 0.05), "smoke": (0.25, 0.25, 0.27),
}
PIP_COLOURS: dict[str, tuple[float, float, float]] = {
    "black": (0.010, 0.010, 0.010), "white": (0.85, 0.85, 0.83), "red": (0.45, 0.015, 0.015),
    "blue": (0.015, 0.04, 0.35), "yellow": (0.80, 0.55, 0.02),
}
TRAY_MATERIALS: dict[str, tuple[tuple[float, float, float], ...]] = {
    "felt": ((0.03, 0.16, 0.05), (0.02, 0.05, 0.20), (0.16, 0.015, 0.03), (0.015, 0.015, 0.017),
             (0.13, 0.13, 0.13), (0.07, 0.02, 0.12), (0.20, 0.06, 0.015)),
    "light wood": ((0.60, 0.38, 0.18), (0.55, 0.40, 0.22), (0.48, 0.28, 0.12)),
    "dark wood": ((0.16, 0.07, 0.03), (0.10, 0.045, 0.02), (0.22, 0.09, 0.035)),
    "card": ((0.80, 0.78, 0.72), (0.70, 0.62, 0.48), (0.45, 0.30, 0.16), (0.35, 0.36, 0.38)),
    "plastic": ((0.02, 0.02, 0.02), (0.75, 0.75, 0.75), (0.40, 0.03, 0.03), (0.03, 0.10, 0.35),
                (0.25, 0.26, 0.27)),
}
TABLE_MATERIALS: dict[str, tuple[tuple[float, float, float], ...]] = {
    "light wood": TRAY_MATERIALS["light wood"],
    "dark wood": TRAY_MATERIALS["dark wood"],
    "laminate": ((0.70, 0.70, 0.68), (0.30, 0.30, 0.30), (0.55, 0.50, 0.42)),
    "cloth": ((0.55, 0.52, 0.45), (0.10, 0.15, 0.30), (0.40, 0.08, 0.06)),
}
# Marbled dice: a body swirled with a second colour; pips stand out from the body, if not always much
# (red on blue).
MARBLED_DICE: dict[str, tuple[tuple[float, float, float], tuple[float, float, float], tuple[str, ...]]] = {
    "blue-black": ((0.020, 0.060, 0.42), (0.010, 0.010, 0.012), ("red", "white", "yellow")),
    "red-black": ((0.50, 0.020, 0.022), (0.012, 0.010, 0.010), ("white", "yellow")),
    "purple-black": ((0.12, 0.02, 0.20), (0.010, 0.008, 0.012), ("white", "yellow")),
    "green-black": ((0.025, 0.25, 0.045), (0.008, 0.012, 0.008), ("white", "red")),
    "black-grey": ((0.012, 0.012, 0.013), (0.30, 0.30, 0.31), ("red", "red", "white", "yellow")),
    "red-white": ((0.50, 0.020, 0.022), (0.80, 0.78, 0.75), ("black",)),
    "blue-white": ((0.020, 0.060, 0.42), (0.80, 0.80, 0.78), ("black", "yellow")),
    "white-grey": ((0.80, 0.80, 0.77), (0.30, 0.30, 0.30), ("black", "red", "blue")),
    "ivory-brown": ((0.75, 0.62, 0.42), (0.20, 0.10, 0.04), ("black", "red")),
}
SKIN_TONES = ((0.62, 0.40, 0.30), (0.45, 0.27, 0.18), (0.25, 0.13, 0.08), (0.12, 0.06, 0.04), (0.70, 0.50, 0.40))
LIGHTINGS = ("soft overhead", "warm bulb", "window daylight", "dim room", "low hard light", "glare")


@dataclass(frozen=True)
class DieLook:
    colour: str  # a DIE_COLOURS name
    body: tuple[float, float, float]  # linear RGB (the tint of a translucent die)
    pip_colour: str
    pips: str  # "recessed" or "painted"
    roughness: float  # 0.02 glossy .. 0.6 matte
    edge_radius: float  # mm: how round the edges and corners are
    pip_radius: float  # mm
    pip_spread: float  # how far outer pips sit from a face's middle (1 = a quarter of the face in)
    vein: tuple[float, float, float] | None = None  # linear RGB swirled through a marbled die's body

    @property
    def translucent(self) -> bool:
        return self.colour == "translucent"


@dataclass(frozen=True)
class PlannedDie:
    pose: DieSpec
    look: DieLook
    rests: str  # "flat", "touching" (a die or a wall), "cocked on wall", "cocked on die"

    @property
    def cocked(self) -> bool:
        return self.rests.startswith("cocked")


@dataclass(frozen=True)
class Light:
    kind: str  # Blender light type: "AREA", "POINT" or "SUN"
    position: tuple[float, float, float]  # mm; for a sun, only its direction from the origin counts
    size: float  # mm (area side, point radius); degrees of sky for a sun
    power: float  # watts (sun: W/m2)
    colour: tuple[float, float, float]


@dataclass(frozen=True)
class Lens:
    """The Pi camera's optics for this picture: where it is focused and how the picture is spoiled."""

    focal_px: float
    fstop: float
    focus_mm: float  # distance the lens is focused at (autofocus is rarely exactly on the dice)
    motion_blur: tuple[float, float]  # (length px, angle deg) of camera shake during the exposure
    exposure: float  # stops above (+) or below (-) a middle-grey exposure
    gain: float  # the sensor's analogue gain: 1-2.5 in a lit room, 4-8 in a dim one, where noise shows
    noise: float  # read noise in 8-bit levels at unit gain
    jpeg_quality: int


@dataclass(frozen=True)
class Extra:
    kind: str  # "cable", "phone" or "laptop"
    points: tuple[tuple[float, float, float], ...]  # cable path, or a box's centre and its yaw in [1][0]
    colour: tuple[float, float, float]


@dataclass(frozen=True)
class Scene:
    seed: int
    width: int
    height: int
    tray: Tray
    tray_material: str
    tray_colour: tuple[float, float, float]
    table_material: str
    table_colour: tuple[float, float, float]
    dice: tuple[PlannedDie, ...]
    lighting: str
    lights: tuple[Light, ...]
    ambient: tuple[float, float, float]  # world light, linear RGB times strength
    camera: Camera
    tilt: float  # degrees from straight down
    lens: Lens
    hand: tuple[Capsule, ...]
    skin: tuple[float, float, float]
    extras: tuple[Extra, ...]
    texture_seed: int
    only: str | None = None  # the one condition planned, for measuring (SINGLE_CONDITIONS)

    @property
    def capsules(self) -> tuple[Capsule, ...]:
        return self.hand

    def poses(self) -> list[DieSpec]:
        return [d.pose for d in self.dice]


def _point(values) -> tuple[float, float, float]:
    x, y, z = (float(v) for v in values)
    return x, y, z


def _pick(rng: np.random.Generator, options):
    return options[int(rng.integers(len(options)))]


def die_look(rng: np.random.Generator, size: float, colour: str | None = None,
             colours: tuple[str, ...] = tuple(DIE_COLOURS)) -> DieLook:
    """A die's look; `colours` may name DIE_COLOURS or MARBLED_DICE."""
    colour = colour or _pick(rng, colours)
    vein = None
    if colour in MARBLED_DICE:
        body, vein, pip_choices = MARBLED_DICE[colour]
    else:
        body, pip_choices = DIE_COLOURS[colour]
    if colour == "translucent":
        body = TRANSLUCENT_TINTS[_pick(rng, list(TRANSLUCENT_TINTS))]
    return DieLook(
        colour=colour, body=body, pip_colour=_pick(rng, pip_choices),
        pips="recessed" if rng.random() < 0.7 else "painted",
        roughness=float(rng.choice([rng.uniform(0.03, 0.15), rng.uniform(0.15, 0.6)])),
        # a painted pip must stay on the flat of the face: 0.27 + 0.09 < 0.5 - 0.12 of the side
        edge_radius=float(size * rng.uniform(0.05, 0.12)),
        pip_radius=float(size * rng.uniform(0.075, 0.09)),
        pip_spread=float(rng.uniform(0.96, 1.08)),
        vein=vein,
    )


def floor_view(camera: Camera, z: float, margin: float) -> np.ndarray:
    """The corners (x, y) of the picture, `margin` px in, where they meet the plane at height z."""
    w, h = camera.width, camera.height
    pixels = np.array([[margin, margin], [w - margin, margin], [w - margin, h - margin], [margin, h - margin]], float)
    rays = np.stack([(pixels[:, 0] - w / 2) / camera.focal, (pixels[:, 1] - h / 2) / camera.focal,
                     np.ones(4)], axis=1) @ camera.rotation
    t = (z - camera.position[2]) / rays[:, 2]
    return (camera.position + t[:, None] * rays)[:, :2]


def in_picture(camera: Camera, die: DieSpec, margin: float) -> bool:
    pixels = camera.project(top_face(die)[2])
    return bool(np.all(pixels >= margin) and np.all(pixels[:, 0] <= camera.width - margin)
                and np.all(pixels[:, 1] <= camera.height - margin))


def fits(tray: Tray, placed: list[PlannedDie], die: DieSpec, gap: float = 0.15) -> bool:
    """Inside the tray's walls and clear of every die already placed."""
    if not tray.contains(die.corners()[:, :2]).all():
        return False
    shape = footprint(die)
    return not any(polygons_overlap(shape, footprint(p.pose), gap) for p in placed)


def _camera(rng: np.random.Generator, tray: Tray, width: int, height: int,
            tilts: tuple[float, float] | None = None) -> tuple[Camera, float, float]:
    """A camera 15-45 cm above the floor, tilted up to 20 degrees (or within `tilts`), aimed near the
    tray's middle."""
    height_mm = float(rng.uniform(150, 450))
    if tilts is not None:
        tilt = float(rng.uniform(*tilts))
    else:
        tilt = float(rng.uniform(0, 20)) if rng.random() < 0.75 else float(rng.uniform(0, 2))
    azimuth = rng.uniform(0, 2 * math.pi)
    target = np.array([rng.uniform(-0.2, 0.2) * tray.size[0], rng.uniform(-0.2, 0.2) * tray.size[1], 0.0])
    distance = height_mm / math.cos(math.radians(tilt))
    direction = np.array([math.sin(math.radians(tilt)) * math.cos(azimuth),
                          math.sin(math.radians(tilt)) * math.sin(azimuth), math.cos(math.radians(tilt))])
    position = target + distance * direction
    roll = float(rng.integers(4) * 90 + rng.uniform(-15, 15))
    camera = Camera(look_at(position, target, roll), position, focal_pixels(width, height), width, height)
    return camera, tilt, height_mm


def _place(rng: np.random.Generator, tray: Tray, camera: Camera, count: int, size_of, touchy: float,
           cocky: float, look_of) -> list[PlannedDie]:
    """Dice resting in the tray where the camera sees their top faces: mostly apart, some touching a
    die or a wall, some cocked against a wall or a die (the cases that trouble a reader)."""
    placed: list[PlannedDie] = []
    view = floor_view(camera, 0.0, 0.0)
    low, high = view.min(axis=0), view.max(axis=0)
    for _ in range(count):
        size = size_of()
        for _attempt in range(60):
            value = int(rng.integers(1, 7))
            roll = rng.random()
            flat_ones = [p for p in placed if not p.cocked]
            die: DieSpec | None
            if roll < cocky:
                tilt = float(rng.uniform(15, 38))
                if flat_ones and rng.random() < 0.5:
                    other = _pick(rng, flat_ones).pose
                    towards = other.yaw + 90 * int(rng.integers(4))
                    d = np.array([math.cos(math.radians(towards)), math.sin(math.radians(towards))])
                    lateral = np.array([-d[1], d[0]]) * rng.uniform(-0.25, 0.25) * min(size, other.size)
                    start = np.array([other.x, other.y]) - d * (other.size + size) + lateral
                    cocked = replace(leaning(value, size, towards, tilt), x=float(start[0]), y=float(start[1]))
                    die = pushed_until(cocked, d, lambda c: fits(tray, placed, c, gap=0.05), far=size)
                    rests = "cocked on die"
                else:
                    start = rng.uniform(low, high)
                    d = tray.wall_direction(start)
                    towards = math.degrees(math.atan2(d[1], d[0]))
                    cocked = replace(leaning(value, size, towards, tilt), x=float(start[0]), y=float(start[1]))
                    die = pushed_until(cocked, d, lambda c: fits(tray, placed, c), far=max(tray.size))
                    if die is not None and tray.contains(die.corners()[:, :2], margin=0.3).all():
                        die = None  # it came to rest against a die, not the wall: try again
                    rests = "cocked on wall"
            elif roll < cocky + touchy and (placed or rng.random() < 0.4):
                yaw = float(rng.uniform(0, 360))
                if placed and rng.random() < 0.7:
                    other = _pick(rng, placed).pose
                    towards = float(rng.uniform(0, 360))
                    d = np.array([math.cos(math.radians(towards)), math.sin(math.radians(towards))])
                    start = np.array([other.x, other.y]) - d * (other.size + size) * 1.2
                    if rng.random() < 0.6:
                        yaw = other.yaw + float(rng.uniform(-5, 5))
                else:
                    start = rng.uniform(low, high)
                    d = tray.wall_direction(start)
                    if rng.random() < 0.6:
                        yaw = math.degrees(math.atan2(d[1], d[0])) + float(rng.uniform(-4, 4))
                die = DieSpec(value, float(start[0]), float(start[1]), size, yaw, "", "")
                die = pushed_until(die, d, lambda c: fits(tray, placed, c, gap=0.1), far=max(tray.size))
                rests = "touching"
            else:
                x, y = rng.uniform(low, high)
                die = DieSpec(value, float(x), float(y), size, float(rng.uniform(0, 360)), "", "")
                die = die if fits(tray, placed, die, gap=0.3) else None
                rests = "flat"
            # 3 px of a 640 px picture: the same share of any size, so a seed plans one scene at every size
            if die is not None and in_picture(camera, die, margin=3.0 * camera.width / SIZE[0]):
                placed.append(PlannedDie(die, look_of(size), rests))
                break
    return placed


def _lights(rng: np.random.Generator, kind: str,
            camera: Camera) -> tuple[tuple[Light, ...], tuple[float, float, float]]:
    lights: tuple[Light, ...]
    """The lights of one of LIGHTINGS and the room's ambient light."""
    def around(distance: float, elevation_deg: float) -> tuple[float, float, float]:
        azimuth = rng.uniform(0, 2 * math.pi)
        elevation = math.radians(elevation_deg)
        return (distance * math.cos(elevation) * math.cos(azimuth), distance * math.cos(elevation) * math.sin(azimuth),
                distance * math.sin(elevation))

    white = (1.0, 0.98, 0.95)
    warm = (1.0, 0.62, 0.32)
    cool = (0.80, 0.88, 1.0)
    if kind == "soft overhead":
        lights = (Light("AREA", around(rng.uniform(900, 1500), rng.uniform(65, 90)), rng.uniform(400, 1000),
                        rng.uniform(150, 400), white),)
        ambient = (0.25, 0.25, 0.25)
    elif kind == "warm bulb":
        lights = (Light("POINT", around(rng.uniform(500, 1100), rng.uniform(40, 80)), rng.uniform(15, 40),
                        rng.uniform(40, 120), warm),)
        ambient = (0.05, 0.035, 0.02)
    elif kind == "window daylight":
        lights = (Light("AREA", around(rng.uniform(1200, 2000), rng.uniform(15, 45)), rng.uniform(800, 1600),
                        rng.uniform(800, 2500), cool),)
        ambient = (0.30, 0.36, 0.45)
    elif kind == "dim room":
        lights = (Light("POINT", around(rng.uniform(1200, 2500), rng.uniform(30, 70)), rng.uniform(20, 60),
                        rng.uniform(3, 12), warm),)
        ambient = (0.02, 0.02, 0.025)
    elif kind == "low hard light":
        lights = (Light("SUN", around(1000, rng.uniform(7, 22)), rng.uniform(0.3, 1.5), rng.uniform(2.5, 6), white),)
        ambient = (0.08, 0.09, 0.11)
    elif kind == "glare":
        # a small bright lamp just beside the lens, as a desk lamp next to the camera arm
        near = _point(camera.position + rng.uniform(-60, 60, 3) * (1, 1, 0.3) + (0, 0, 10))
        lights = (Light("AREA", around(rng.uniform(900, 1500), rng.uniform(60, 90)), rng.uniform(400, 900),
                        rng.uniform(60, 150), white),
                  Light("POINT", near, rng.uniform(2, 6), rng.uniform(2, 8), white))
        ambient = (0.12, 0.12, 0.12)
    else:
        raise ValueError(f"unknown lighting {kind!r}; choose from {', '.join(LIGHTINGS)}")
    return lights, ambient


def _hand(rng: np.random.Generator, camera: Camera, dice: list[PlannedDie]) -> tuple[Capsule, ...]:
    """An arm reaching in from beyond the picture's edge towards a die or the tray's middle: forearm,
    palm and four fingers as rounded rods, hovering or resting its fingertips on the floor."""
    if dice and rng.random() < 0.7:
        reached = dice[int(rng.integers(len(dice)))].pose
        target = np.array([reached.x, reached.y])
    else:
        target = floor_view(camera, 0.0, 0.0).mean(axis=0)
    heading = rng.uniform(0, 2 * math.pi)
    d = np.array([math.cos(heading), math.sin(heading)])
    side = np.array([-d[1], d[0]])
    hover = float(rng.choice([rng.uniform(20, 80), 9.0]))
    tip = np.array([*(target + d * rng.uniform(-10, 25)), hover])
    palm = tip - np.array([*(d * 75), -12])
    wrist = palm - np.array([*(d * 45), -6])
    elbow = wrist - np.array([*(d * 260), -90])
    capsules = [Capsule(_point(elbow), _point(wrist), 30.0), Capsule(_point(wrist), _point(palm), 24.0)]
    for k, length in zip((-1.5, -0.5, 0.5, 1.5), (62, 72, 68, 55)):
        base = palm + np.array([*(side * k * 19), -4])
        end = base + np.array([*(d * length), -(base[2] - hover) * 0.8])
        capsules.append(Capsule(_point(base), _point(end), 8.5))
    thumb = palm + np.array([*(side * rng.choice([-1, 1]) * 38 - d * 20), -6])
    capsules.append(Capsule(_point(thumb), _point(thumb + np.array([*(d * 45), -5])), 10.0))
    return tuple(capsules)


def _extras(rng: np.random.Generator, tray: Tray) -> tuple[Extra, ...]:
    """Now and then a cable or a phone on the table beside the tray."""
    extras = []
    reach = max(tray.size) / 2 + tray.wall_thickness
    if rng.random() < 0.3:
        start = rng.uniform(0, 2 * math.pi)
        points = []
        for k in range(6):
            angle = start + k * rng.uniform(0.15, 0.35)
            r = reach + rng.uniform(15, 60)
            points.append((r * math.cos(angle), r * math.sin(angle), 2.0))
        extras.append(Extra("cable", tuple(points), _pick(rng, [(0.02, 0.02, 0.02), (0.8, 0.8, 0.8)])))
    if rng.random() < 0.2:
        angle = rng.uniform(0, 2 * math.pi)
        r = reach + rng.uniform(60, 110)
        extras.append(Extra("phone", ((r * math.cos(angle), r * math.sin(angle), 4.5),
                                      (float(rng.uniform(0, 360)), 0.0, 0.0)), (0.02, 0.02, 0.025)))
    return tuple(extras)


def _beside_the_dice(rng: np.random.Generator, camera: Camera, dice: list[PlannedDie]) -> tuple[Extra, ...]:
    """A laptop reaching into the picture over one side and a cable along another, each only over a
    side whose outer band (a fifth of the picture) no die lies in."""
    view = floor_view(camera, 0.0, 0.0)
    centre = view.mean(axis=0)
    free = []
    for corner in range(4):
        a, b = view[corner], view[(corner + 1) % 4]
        length = float(np.linalg.norm(b - a))
        across = abs(_cross(b - a, centre - a)) / length  # the side to the picture's middle
        if all(abs(_cross(b - a, np.array([die.pose.x, die.pose.y]) - a)) / length > 0.4 * across + die.pose.size
               for die in dice):
            free.append((a, b, length, across))
    extras: list[Extra] = []
    for slot, index in enumerate(rng.permutation(len(free))[:2]):
        a, b, length, across = free[index]
        along = (b - a) / length
        inward = np.array([-along[1], along[0]]) * np.sign(_cross(b - a, centre - a))
        if slot == 0 and rng.random() < 0.7:
            reach = across * rng.uniform(0.1, 0.35)  # how far the laptop's near edge comes into the picture
            middle = (a + b) / 2 + along * rng.uniform(-0.3, 0.3) * length \
                - inward * (LAPTOP_MM[1] / 2 - reach)
            yaw = math.degrees(math.atan2(along[1], along[0])) + float(rng.uniform(-12, 12))
            extras.append(Extra("laptop", ((float(middle[0]), float(middle[1]), LAPTOP_MM[2] / 2), (yaw, 0.0, 0.0)),
                                _pick(rng, LAPTOP_COLOURS)))
        else:
            points = [a + (b - a) * share + inward * across * rng.uniform(0.05, 0.3)
                      for share in np.linspace(-0.2, 1.2, 6)]
            extras.append(Extra("cable", tuple((float(x), float(y), 2.0) for x, y in points),
                                _pick(rng, [(0.02, 0.02, 0.02), (0.8, 0.8, 0.8)])))
    return tuple(extras)


def _cross(u: np.ndarray, v: np.ndarray) -> float:
    return float(u[0] * v[1] - u[1] * v[0])


# The conditions the reader issue asks to measure one at a time, and "plain": none of them.
SINGLE_CONDITIONS = ("plain", "wood tray", "hard shadow", "translucent dice", "touching dice", "tilt > 5 deg",
                     "cocked dice")
# Asked for by name only (not in --conditions' turn, so every batch rendered before stays as it was).
OTHER_CONDITIONS = ("marbled dice", "no tray", "felt tray from above")
# "no tray": dice thrown on a bare desk, as a webcam over a desk sees them: no walls, the desk anywhere
# the camera looks, and a laptop's edge or a cable in the picture beside the dice.
DESK = Tray("rect", (900.0, 700.0), 0.0, 0.0)
LAPTOP_MM = (330.0, 230.0, 18.0)
LAPTOP_COLOURS = ((0.02, 0.02, 0.022), (0.45, 0.45, 0.47), (0.20, 0.20, 0.21))
# "felt tray from above": a player's phone photo into a round felt dice tray: white dice with coloured
# pips, the camera within 5 degrees of straight down, in focus and held still, in a lit room.
FROM_ABOVE = "felt tray from above"
ONLY_CONDITIONS = SINGLE_CONDITIONS + OTHER_CONDITIONS  # what `only` may name


def plan_scene(seed: int, size: tuple[int, int] = SIZE, only: str | None = None) -> Scene:
    """The scene of `seed`: always the same one for the same seed. With `only` (one of
    ONLY_CONDITIONS) the scene has that condition and none of the others, and no
    hand: pictures for measuring a reader condition by condition."""
    if only is not None and only not in ONLY_CONDITIONS:
        raise ValueError(f"unknown condition {only!r}; choose from {', '.join(ONLY_CONDITIONS)}")
    rng = np.random.default_rng(seed)
    width, height = size
    if rng.random() < 0.6:
        inner = rng.uniform(200, 340)
        tray = Tray("rect", (float(inner), float(inner * rng.uniform(0.6, 0.9))), float(rng.uniform(15, 35)),
                    float(rng.uniform(8, 20)))
    else:
        diameter = float(rng.uniform(200, 320))
        tray = Tray("round", (diameter, diameter), float(rng.uniform(15, 35)), float(rng.uniform(8, 20)))
    if only == "no tray":
        tray = DESK
    elif only == FROM_ABOVE and tray.shape != "round":
        tray = Tray("round", (tray.size[0], tray.size[0]), tray.wall_height, tray.wall_thickness)
    materials = (["felt"] if only == FROM_ABOVE else
                 [m for m in TRAY_MATERIALS if only is None or m.endswith("wood") == (only == "wood tray")])
    tray_material = _pick(rng, materials)
    table_material = _pick(rng, list(TABLE_MATERIALS))
    tilts = None if only is None else (5.0, 20.0) if only == "tilt > 5 deg" else (0.0, 5.0)
    camera, tilt, _height = _camera(rng, tray, width, height, tilts)

    if only is None:
        count = int(rng.choice(7, p=(0.04, 0.06, 0.08, 0.1, 0.14, 0.4, 0.18)))
    else:
        count = int(rng.choice([2, 3, 4, 5, 5, 5, 6]))
    base_size = float(rng.uniform(12, 19))
    mixed_sizes = rng.random() < 0.15
    same_look = rng.random() < 0.5
    if only == "marbled dice":
        colours = tuple(MARBLED_DICE)
    elif only == FROM_ABOVE:
        colours = ("white",)
    else:
        colours = tuple(c for c in DIE_COLOURS if only is None or (c == "translucent") == (only == "translucent dice"))
    shared_look = die_look(rng, base_size, colours=colours)

    def size_of() -> float:
        return float(rng.uniform(12, 19)) if mixed_sizes else base_size

    def look_of(die_size: float) -> DieLook:
        if same_look:
            return replace(shared_look, edge_radius=shared_look.edge_radius / base_size * die_size,
                           pip_radius=shared_look.pip_radius / base_size * die_size)
        return die_look(rng, die_size, colours=colours)

    if only is None:
        touchy = float(rng.choice([0.0, 0.25, 0.5]))
        cocky = 0.08 if rng.random() < 0.4 else 0.0
    else:
        touchy = 0.6 if only == "touching dice" else 0.0
        cocky = 0.3 if only == "cocked dice" else 0.0
    dice = _place(rng, tray, camera, count, size_of, touchy, cocky, look_of)

    if only is None:
        lighting = _pick(rng, LIGHTINGS)
    else:
        unlit = ("low hard light", "dim room") if only == FROM_ABOVE else ("low hard light",)
        lighting = "low hard light" if only == "hard shadow" else _pick(rng, [k for k in LIGHTINGS if k not in unlit])
    lights, ambient = _lights(rng, lighting, camera)
    hand = _hand(rng, camera, dice) if rng.random() < 0.08 and only is None else ()
    target = np.linalg.norm(camera.position - np.array([*floor_view(camera, 0.0, 0.0).mean(axis=0), 0.0]))
    defocus = rng.random() < 0.3 and only != FROM_ABOVE
    lens = Lens(
        focal_px=camera.focal, fstop=2.0 if defocus else 8.0,
        focus_mm=float(target * (rng.uniform(0.45, 0.8) if defocus else 1.0)),
        # camera shake turns the camera by an angle, so its length in pixels grows with the frame's width
        motion_blur=(float(rng.uniform(1.5, 6)) * width / SIZE[0] if rng.random() < 0.2 and only != FROM_ABOVE
                     else 0.0,
                     float(rng.uniform(0, 180))),
        exposure=float(rng.uniform(-1.3, -0.4) if lighting == "dim room" else rng.uniform(-0.4, 0.4)),
        gain=float(rng.uniform(4, 8) if lighting == "dim room" else rng.uniform(1, 2.5)),
        noise=float(rng.uniform(0.6, 2.5)), jpeg_quality=int(rng.integers(60, 96)),
    )
    # drawn in this order, so every seed planned before "no tray" came plans the same scene
    tray_colour, table_colour = _pick(rng, TRAY_MATERIALS[tray_material]), _pick(rng, TABLE_MATERIALS[table_material])
    skin, extras, texture_seed = _pick(rng, SKIN_TONES), _extras(rng, tray), int(rng.integers(2**20))
    if only == "no tray":
        tray_material, extras = "none", _beside_the_dice(rng, camera, dice)
    return Scene(
        seed=seed, width=width, height=height, tray=tray, tray_material=tray_material, tray_colour=tray_colour,
        table_material=table_material, table_colour=table_colour, dice=tuple(dice), lighting=lighting,
        lights=lights, ambient=ambient, camera=camera, tilt=tilt, lens=lens, hand=hand, skin=skin,
        extras=extras, texture_seed=texture_seed, only=only,
    )
