"""Photo-like top-down pictures of dice in a tray, made from a seed, with the reading each must give.

The scene is built in millimetres and projected through a pinhole camera, so perspective, side faces
and shadows follow from geometry rather than being painted on: a die near the edge of the view shows
the side faces a real die would, with the pips that belong there (opposite faces sum to 7, and 1-2-3
run counter-clockwise round their shared corner, as on Western dice).

    python -m vision.synth --out samples/            # the repository's sample set
    python -m vision.synth --out /tmp/many --count 5000 --first-seed 1000

Each picture is written with a JSON truth file (every die's value, centre, size, angle, top-face
corners) and a YOLO label like ../shared/datasets/byler-d6, and listed in manifest.csv.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

import cv2
import numpy as np

# Face value on each face of the die, keyed by the face's outward normal in the die's own frame.
# Opposite faces sum to 7; 1 (+z), 2 (+x), 3 (+y) meet at one corner in counter-clockwise order.
FACE_VALUES: dict[tuple[int, int, int], int] = {
    (0, 0, 1): 1,
    (0, 0, -1): 6,
    (1, 0, 0): 2,
    (-1, 0, 0): 5,
    (0, 1, 0): 3,
    (0, -1, 0): 4,
}

# Pip centres on a face spanning -1..1 in both directions; 0.5 puts outer pips a quarter in from the edge.
_P = 0.5
PIP_LAYOUTS: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0, 0),),
    2: ((-_P, -_P), (_P, _P)),
    3: ((-_P, -_P), (0, 0), (_P, _P)),
    4: ((-_P, -_P), (_P, -_P), (-_P, _P), (_P, _P)),
    5: ((-_P, -_P), (_P, -_P), (0, 0), (-_P, _P), (_P, _P)),
    6: ((-_P, -_P), (-_P, 0), (-_P, _P), (_P, -_P), (_P, 0), (_P, _P)),
}

# BGR colours. Dice are "light" or "dark"; pips are chosen to contrast, as on real dice.
DIE_COLOURS: dict[str, tuple[tuple[int, int, int], bool]] = {
    "white": ((232, 234, 236), True),
    "ivory": ((196, 226, 238), True),
    "yellow": ((40, 205, 238), True),
    "red": ((38, 36, 190), False),
    "blue": ((170, 86, 28), False),
    "green": ((62, 148, 38), False),
    "black": ((32, 30, 30), False),
}
PIP_COLOURS: dict[str, tuple[tuple[int, int, int], bool]] = {
    "black": ((24, 22, 22), False),
    "red": ((36, 30, 200), False),
    "white": ((240, 240, 240), True),
    "yellow": ((40, 210, 240), True),
}
TRAY_COLOURS: dict[str, tuple[int, int, int]] = {
    "green felt": (52, 110, 38),
    "blue felt": (120, 62, 30),
    "burgundy felt": (44, 30, 110),
    "black felt": (34, 34, 36),
    "grey": (150, 150, 146),
    "cream": (205, 222, 228),
    "white": (225, 228, 230),
    "wood": (70, 110, 160),
}
SKIN_TONES = ((120, 150, 205), (95, 125, 180), (60, 90, 140), (40, 60, 95), (150, 175, 225))
RESOLUTIONS = ((640, 480), (800, 600), (1024, 768), (1280, 960))
DISTRACTIONS = ("hand", "cocked", "motion_blur")

_FACE_TEXTURE = 96  # pixels per face texture side: enough for the largest die at 1280x960


@dataclass(frozen=True)
class DieSpec:
    """One die in the scene: its pose in tray millimetres and how it looks."""

    value: int
    x: float
    y: float
    size: float
    yaw: float  # degrees about the vertical
    colour: str
    pips: str
    translucent: bool = False
    marbled: bool = False  # veined in a second colour, as many real dice are
    tilt: float = 0.0  # degrees; a cocked die leans on something and has no flat top face
    tilt_axis: float = 0.0  # degrees, direction in the tray plane the die leans about
    lift: float = 0.0  # mm above the floor (a die in the air while rolling)
    spin: tuple[float, float, float] | None = None  # extra rotation vector (radians) while tumbling

    def rotation(self) -> np.ndarray:
        """Die frame to world: puts the face showing `value` up, then yaws, tilts and spins."""
        up_axis = next(np.array(n, float) for n, v in FACE_VALUES.items() if v == self.value)
        rotation = _rotation_between(up_axis, np.array([0.0, 0.0, 1.0]))
        rotation = _rot_z(math.radians(self.yaw)) @ rotation
        if self.tilt:
            axis = np.array([math.cos(math.radians(self.tilt_axis)), math.sin(math.radians(self.tilt_axis)), 0])
            rotation = cv2.Rodrigues(axis * math.radians(self.tilt))[0] @ rotation
        if self.spin is not None:
            rotation = cv2.Rodrigues(np.array(self.spin, float))[0] @ rotation
        return rotation

    def corners(self) -> np.ndarray:
        """The 8 corners in world millimetres, resting on (or above) the floor."""
        half = self.size / 2.0
        local = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float) * half
        world = local @ self.rotation().T
        world[:, 2] -= world[:, 2].min()  # lowest corner on the floor
        world[:, :2] += (self.x, self.y)
        world[:, 2] += self.lift
        return world

    def centre(self) -> np.ndarray:
        return self.corners().mean(axis=0)

    def faces(self) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """(value, outward world normal, 4 world corners in texture order) for each face."""
        rotation = self.rotation()
        centre = self.centre()
        half = self.size / 2.0
        faces = []
        for normal, value in FACE_VALUES.items():
            n = np.array(normal, float)
            # Two in-face axes, fixed per face so each face's pip pattern has one orientation on the die.
            u = np.roll(n, 1) if n.sum() > 0 else -np.roll(n, 1)
            v = np.cross(n, u)
            local = [n * half + (su * u + sv * v) * half for su, sv in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
            world = np.array(local) @ rotation.T + centre
            faces.append((value, rotation @ n, world))
        return faces

    def top_value(self) -> int:
        """The value of the face pointing most nearly up (equals `value` unless spun)."""
        return max(self.faces(), key=lambda face: face[1][2])[0]


@dataclass(frozen=True)
class Camera:
    """A pinhole camera in tray millimetres: world-to-camera rotation, position, focal length, size."""

    rotation: np.ndarray
    position: np.ndarray
    focal: float
    width: int
    height: int

    def project(self, points: np.ndarray) -> np.ndarray:
        cam = (np.asarray(points, float) - self.position) @ self.rotation.T
        return np.stack(
            [self.focal * cam[:, 0] / cam[:, 2] + self.width / 2, self.focal * cam[:, 1] / cam[:, 2] + self.height / 2],
            axis=1,
        )

    def faces_camera(self, point: np.ndarray, normal: np.ndarray) -> bool:
        return float(np.dot(self.position - point, normal)) > 1e-6


@dataclass(frozen=True)
class Scene:
    """Everything needed to render one picture; a pure value, so frames of a sequence share it."""

    width: int
    height: int
    tray_size: tuple[float, float]
    wall_height: float
    tray_colour: str
    table_colour: tuple[int, int, int]
    camera: Camera
    light: tuple[float, float, float]  # unit vector towards the light
    dice: tuple[DieSpec, ...]
    gradient: tuple[float, float, float]  # brightness slope in x, y (per image width) and vignette
    glare: tuple[tuple[float, float, float, float], ...]  # (x, y, radius, strength) in pixels
    blur_sigma: float
    noise_sigma: float
    texture_seed: int
    frame: int = 0  # frames of one sequence share textures but each gets its own sensor noise
    hand: tuple[tuple[float, float], tuple[float, float], tuple[int, int, int]] | None = None
    motion_blur: tuple[float, float] | None = None  # (length px, angle deg)
    problems: tuple[str, ...] = field(default=())


def _rotation_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A proper rotation taking unit vector a onto unit vector b."""
    axis = np.cross(a, b)
    sin = np.linalg.norm(axis)
    cos = float(np.dot(a, b))
    if sin < 1e-9:
        if cos > 0:
            return np.eye(3)
        perpendicular = np.array([1.0, 0, 0]) if abs(a[0]) < 0.9 else np.array([0, 1.0, 0])
        return cv2.Rodrigues(np.cross(a, perpendicular) / np.linalg.norm(np.cross(a, perpendicular)) * math.pi)[0]
    return cv2.Rodrigues(axis / sin * math.atan2(sin, cos))[0]


def _rot_z(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def look_at(position: np.ndarray, target: np.ndarray, roll_deg: float) -> np.ndarray:
    """World-to-camera rotation: camera z towards the target, image up towards the tray's far side."""
    forward = (target - position) / np.linalg.norm(target - position)
    right = np.cross(forward, np.array([0.0, 1.0, 0.0]))
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    rotation = np.stack([right, down, forward])
    roll = math.radians(roll_deg)
    return _rot_z(roll) @ rotation


def _tray_corners(tray: tuple[float, float], wall: float) -> np.ndarray:
    """The 8 corners of the tray floor and wall tops, in millimetres."""
    w, d = tray
    return np.array([[sx * w / 2, sy * d / 2, z] for sx in (-1, 1) for sy in (-1, 1) for z in (0, wall)])


def make_camera(rng: np.random.Generator, width: int, height: int, tray: tuple[float, float], wall: float,
                tilt_deg: float) -> Camera:
    """A camera tilted `tilt_deg` from vertical, framed so the tray nearly fills the picture."""
    azimuth = rng.uniform(0, 2 * math.pi)
    target = np.array([rng.uniform(-0.05, 0.05) * tray[0], rng.uniform(-0.05, 0.05) * tray[1], 0.0])
    distance = rng.uniform(450, 700)
    tilt = math.radians(tilt_deg)
    position = target + distance * np.array([math.sin(tilt) * math.cos(azimuth), math.sin(tilt) * math.sin(azimuth),
                                             math.cos(tilt)])
    rotation = look_at(position, target, rng.uniform(-4, 4))
    cam = (_tray_corners(tray, wall) - position) @ rotation.T
    spread_x = np.max(np.abs(cam[:, 0] / cam[:, 2]))
    spread_y = np.max(np.abs(cam[:, 1] / cam[:, 2]))
    fill = rng.uniform(0.86, 1.04)  # above 1 crops the tray walls a little, as a close camera would
    focal = fill * min(width / 2 / spread_x, height / 2 / spread_y)
    return Camera(rotation, position, focal, width, height)


def _squares_overlap(a: DieSpec, b: DieSpec, gap: float) -> bool:
    """Separating-axis test of two dice footprints (squares in the tray plane), grown by `gap`."""
    def corners(d: DieSpec) -> np.ndarray:
        half = d.size / 2 + gap / 2
        rot = _rot_z(math.radians(d.yaw))[:2, :2]
        return np.array([[-half, -half], [half, -half], [half, half], [-half, half]]) @ rot.T + (d.x, d.y)

    ca, cb = corners(a), corners(b)
    for square in (ca, cb):
        for i in range(2):
            edge = square[i + 1] - square[i]
            axis = np.array([-edge[1], edge[0]])
            pa, pb = ca @ axis, cb @ axis
            if pa.max() <= pb.min() or pb.max() <= pa.min():
                return False
    return True


def place_dice(rng: np.random.Generator, count: int, tray: tuple[float, float], size: float,
               touching: float) -> list[tuple[float, float, float]]:
    """(x, y, yaw) for `count` non-overlapping dice; with probability `touching` a die is set flush
    against one already placed or against a tray wall, the cases that merge dice in naive readers."""
    placed: list[DieSpec] = []
    margin = size * 0.75
    for _ in range(count):
        for _attempt in range(200):
            yaw = rng.uniform(0, 360)
            roll = rng.random()
            if placed and roll < touching:
                other = placed[rng.integers(len(placed))]
                side = rng.integers(4) * 90 + other.yaw
                step = size + rng.uniform(0.0, 0.6)
                x = other.x + step * math.cos(math.radians(side)) + rng.uniform(-0.3, 0.3) * size * math.sin(
                    math.radians(side))
                y = other.y + step * math.sin(math.radians(side)) - rng.uniform(-0.3, 0.3) * size * math.cos(
                    math.radians(side))
                yaw = other.yaw + rng.uniform(-6, 6)
            elif roll < touching * 1.3:
                wall = rng.integers(4)
                yaw = rng.uniform(-5, 5)
                half = size / 2 + 0.3
                x = rng.uniform(-tray[0] / 2 + margin, tray[0] / 2 - margin)
                y = rng.uniform(-tray[1] / 2 + margin, tray[1] / 2 - margin)
                if wall == 0:
                    x = -tray[0] / 2 + half
                elif wall == 1:
                    x = tray[0] / 2 - half
                elif wall == 2:
                    y = -tray[1] / 2 + half
                else:
                    y = tray[1] / 2 - half
            else:
                x = rng.uniform(-tray[0] / 2 + margin, tray[0] / 2 - margin)
                y = rng.uniform(-tray[1] / 2 + margin, tray[1] / 2 - margin)
            candidate = DieSpec(1, x, y, size, yaw, "white", "black")
            inside = all(abs(c[0]) <= tray[0] / 2 and abs(c[1]) <= tray[1] / 2 for c in candidate.corners())
            if inside and not any(_squares_overlap(candidate, p, 0.2) for p in placed):
                placed.append(candidate)
                break
    return [(d.x, d.y, d.yaw) for d in placed]


def pick_colours(rng: np.random.Generator, variety: bool = False) -> tuple[str, str, bool, bool]:
    """A die colour, a pip colour that contrasts (dark pips on light dice, light pips on dark),
    translucent or not, marbled or not.

    `variety` (for training, not for samples/, whose seeds must keep making the same pictures) adds
    what real dice also have and is hardest to read: dim red pips on dark dice, and marbled dice.
    """
    die = rng.choice(list(DIE_COLOURS))
    light_die = DIE_COLOURS[die][1]
    pips = [p for p, (_, light_pip) in PIP_COLOURS.items() if light_pip != light_die]
    if variety and not light_die and rng.random() < 0.3:
        pips = ["red"]
    if die == "red":
        pips = [p for p in pips if p != "red"] or ["white"]
    translucent = bool(rng.random() < 0.15) and die in ("red", "blue", "green", "white")
    marbled = variety and not translucent and bool(rng.random() < 0.25)
    return str(die), str(rng.choice(pips)), translucent, marbled


def random_scene(seed: int, distraction: str | None = None, size: tuple[int, int] | None = None,
                 dice_count: int | None = None, variety: bool = False) -> Scene:
    """A random but reproducible scene. `distraction` is one of DISTRACTIONS or None; `variety` as in
    pick_colours."""
    rng = np.random.default_rng(seed)
    width, height = size or RESOLUTIONS[rng.choice(len(RESOLUTIONS), p=(0.6, 0.2, 0.1, 0.1))]
    tray_width = rng.uniform(240, 360)
    tray = (tray_width, tray_width * rng.uniform(0.68, 0.8))
    wall = rng.uniform(12, 30)
    tilt = rng.uniform(0, 20) if rng.random() < 0.8 else 0.0
    camera = make_camera(rng, width, height, tray, wall, tilt)
    die_size = rng.uniform(15, 21)
    if dice_count is None:
        dice_count = int(rng.choice([0, 1, 2, 3, 4, 5, 5, 5, 5, 5, 6, 7]))
    positions = place_dice(rng, dice_count, tray, die_size, touching=rng.choice([0.0, 0.3, 0.6]))
    same_colour = rng.random() < 0.5
    shared = pick_colours(rng, variety)
    dice = []
    for x, y, yaw in positions:
        colour, pips, translucent, marbled = shared if same_colour else pick_colours(rng, variety)
        dice.append(DieSpec(int(rng.integers(1, 7)), x, y, die_size, yaw, colour, pips, translucent, marbled))
    problems: list[str] = []
    hand = None
    motion = None
    if distraction == "cocked" and dice:
        index = int(rng.integers(len(dice)))
        dice[index] = replace(dice[index], tilt=float(rng.uniform(18, 32)), tilt_axis=float(rng.uniform(0, 360)))
        problems.append("cocked die")
    elif distraction == "hand":
        hand = _random_hand(rng, camera, dice)
        problems.append("hand in view")
    elif distraction == "motion_blur":
        motion = (float(rng.uniform(0.025, 0.05) * width), float(rng.uniform(0, 180)))
        if dice:  # blur makes dice doubtful; an empty tray has nothing to read wrong
            problems.append("motion blur")
    elif distraction is not None and distraction != "cocked":
        raise ValueError(f"unknown distraction {distraction!r}; choose from {', '.join(DISTRACTIONS)}")
    elevation = math.radians(rng.uniform(45, 75))
    azimuth = rng.uniform(0, 2 * math.pi)
    light = (math.cos(elevation) * math.cos(azimuth), math.cos(elevation) * math.sin(azimuth), math.sin(elevation))
    glare = []
    for die in dice:
        if rng.random() < 0.3:
            centre = camera.project(die.centre()[None] + [[0, 0, die.size / 2]])[0]
            pixels = die.size * camera.focal / float(np.linalg.norm(camera.position - die.centre()))
            offset = rng.uniform(-0.3, 0.3, 2) * pixels
            # a sheen wider than a pip: a pip-sized bright spot on a dark die would be a fake pip,
            # which belongs in an unsure sample, not in one expected to read
            glare.append((float(centre[0] + offset[0]), float(centre[1] + offset[1]),
                          float(pixels * rng.uniform(0.22, 0.4)), float(rng.uniform(0.15, 0.35))))
    if rng.random() < 0.3:
        glare.append((float(rng.uniform(0, width)), float(rng.uniform(0, height)),
                      float(width * rng.uniform(0.03, 0.08)), float(rng.uniform(0.15, 0.35))))
    tray_colour = str(rng.choice(list(TRAY_COLOURS)))
    red, green, blue = (int(c) for c in rng.integers(40, 200, 3))
    table = (red, green, blue)
    return Scene(
        width=width, height=height, tray_size=tray, wall_height=wall, tray_colour=tray_colour, table_colour=table,
        camera=camera, light=light, dice=tuple(dice),
        gradient=(float(rng.uniform(-0.35, 0.35)), float(rng.uniform(-0.35, 0.35)), float(rng.uniform(0.0, 0.35))),
        glare=tuple(glare), blur_sigma=float(rng.uniform(0.0, 1.1)), noise_sigma=float(rng.uniform(0.8, 3.5)),
        texture_seed=int(rng.integers(2**31)), hand=hand, motion_blur=motion, problems=tuple(problems),
    )


def _random_hand(rng: np.random.Generator, camera: Camera, dice: Sequence[DieSpec]):
    """An arm from a picture edge to a fingertip point inside the tray, often over a die."""
    w, h = camera.width, camera.height
    if dice and rng.random() < 0.7:
        tip = camera.project(dice[int(rng.integers(len(dice)))].centre()[None])[0]
    else:
        tip = np.array([rng.uniform(0.25, 0.75) * w, rng.uniform(0.25, 0.75) * h])
    edge = int(rng.integers(4))
    along = rng.uniform(0.2, 0.8)
    start = [(along * w, -0.1 * h), (along * w, 1.1 * h), (-0.1 * w, along * h), (1.1 * w, along * h)][edge]
    skin = tuple(int(c) for c in SKIN_TONES[rng.integers(len(SKIN_TONES))])
    return tuple(map(float, start)), tuple(map(float, tip)), skin


# ----------------------------------------------------------------------------------------------- rendering


def face_texture(value: int, die_colour: Sequence[int], pip_colour: Sequence[int],
                 marble: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A die face (BGR float, alpha) with rounded corners, a darker bevelled rim and sunken pips;
    with `marble` (a seed), veined in a lighter or darker shade of its colour."""
    n = _FACE_TEXTURE
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
    u = (xx + 0.5) / n * 2 - 1
    v = (yy + 0.5) / n * 2 - 1
    corner = 0.28  # rounded corner radius, as a fraction of the half face
    qx = np.maximum(np.abs(u) - (1 - corner), 0)
    qy = np.maximum(np.abs(v) - (1 - corner), 0)
    inside = corner - np.hypot(qx, qy)  # distance into the rounded square, in face units
    alpha = np.clip(inside * n / 2 + 0.5, 0, 1)
    edge = np.minimum(1 - np.abs(u), 1 - np.abs(v))
    bevel = 0.72 + 0.28 * np.clip(edge / 0.16, 0, 1)
    colour = np.empty((n, n, 3), np.float32)
    colour[:] = np.array(die_colour, np.float32)
    if marble is not None:
        colour = _marbled(colour, np.random.default_rng(marble))
    colour *= bevel[..., None]
    pip_radius = 0.17 if value != 1 else 0.24
    for px, py in PIP_LAYOUTS[value]:
        distance = np.hypot(u - px, v - py)
        cover = np.clip((pip_radius - distance) * n / 2 + 0.5, 0, 1)[..., None]
        # the sunken pip is darker on the side away from the light: a cheap cue of depth
        shade = 0.8 + 0.2 * np.clip((v - py) / pip_radius, -1, 1)[..., None]
        colour = colour * (1 - cover) + np.array(pip_colour, np.float32) * shade * cover
    return colour, alpha


def _marbled(colour: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Soft veins across a plain face: bands where a smooth random field crosses a few levels."""
    n = colour.shape[0]
    field = cv2.resize(rng.normal(size=(5, 5)).astype(np.float32), (n, n), interpolation=cv2.INTER_CUBIC)
    veins = np.clip(1.0 - np.abs(np.sin(field * rng.uniform(1.5, 3.0))) * 1.4, 0.0, 1.0)[..., None]
    # Light veins on a dark die, dark on a light one, never as far from the die's colour as its pips.
    vein_colour = colour * 0.55 if colour.mean() > 128 else colour * 0.5 + 110.0
    strength = rng.uniform(0.4, 0.8)
    return colour * (1 - strength * veins) + vein_colour * strength * veins


def felt_texture(rng: np.random.Generator, width: int, height: int, colour: Sequence[int]) -> np.ndarray:
    """A felt-like surface: fine fibre noise over soft blotches, in the given BGR colour."""
    fine = cv2.GaussianBlur(rng.normal(0, 1, (height, width)).astype(np.float32), (0, 0), 0.8)
    coarse = cv2.resize(rng.normal(0, 1, (max(height // 40, 2), max(width // 40, 2))).astype(np.float32),
                        (width, height), interpolation=cv2.INTER_CUBIC)
    pattern = 1 + 0.025 * fine + 0.04 * coarse
    return np.array(colour, np.float32)[None, None] * pattern[..., None]


def _paste_quad(image: np.ndarray, texture: np.ndarray, alpha: np.ndarray, corners: np.ndarray) -> None:
    """Warp a texture (with alpha) onto the image quad `corners` (texture order: tl, tr, br, bl)."""
    h, w = image.shape[:2]
    x0, y0 = np.floor(corners.min(axis=0)).astype(int) - 1
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 2
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 <= x0 or y1 <= y0:
        return
    th, tw = texture.shape[:2]
    source = np.array([[0, 0], [tw, 0], [tw, th], [0, th]], np.float32)
    matrix = cv2.getPerspectiveTransform(source, (corners - (x0, y0)).astype(np.float32))
    size = (x1 - x0, y1 - y0)
    warped = cv2.warpPerspective(texture, matrix, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    mask = cv2.warpPerspective(alpha, matrix, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    region = image[y0:y1, x0:x1]
    region *= 1 - mask[..., None]
    region += warped * mask[..., None]


def _fill_polygon(image: np.ndarray, points: np.ndarray, colour: Sequence[float] | np.ndarray,
                  opacity: float = 1.0) -> None:
    mask = np.zeros(image.shape[:2], np.uint8)
    cv2.fillPoly(mask, [np.round(points * 16).astype(np.int32)], 255, lineType=cv2.LINE_AA, shift=4)
    m = (mask.astype(np.float32) / 255 * opacity)[..., None]
    image *= 1 - m
    image += np.array(colour, np.float32) * m


def _rounded_hull(die: DieSpec) -> np.ndarray:
    """World points whose hull is the die's silhouette with rounded corners and edges."""
    radius = die.size * 0.14
    inner = replace(die, size=die.size - 2 * radius)
    corners = inner.corners() + [0, 0, radius]
    sphere = np.array([[math.cos(a) * math.cos(b), math.sin(a) * math.cos(b), math.sin(b)]
                       for a in np.linspace(0, 2 * math.pi, 8, endpoint=False) for b in (-0.9, 0, 0.9)])
    return (corners[:, None, :] + radius * sphere[None]).reshape(-1, 3)


def _shade(normal: np.ndarray, light: np.ndarray) -> float:
    return 0.45 + 0.6 * max(float(np.dot(normal, light)), 0.0)


def _paint_die(image: np.ndarray, scene: Scene, die: DieSpec, textures: dict, body: bool, top: bool) -> None:
    """The die's silhouette and side faces (`body`) and/or its uppermost face (`top`)."""
    camera, light = scene.camera, np.array(scene.light)
    base, _ = DIE_COLOURS[die.colour]
    opacity = 0.78 if die.translucent else 1.0
    faces = die.faces()
    uppermost = max(range(len(faces)), key=lambda index: faces[index][1][2])
    if body:
        silhouette = camera.project(_rounded_hull(die))
        hull = cv2.convexHull(silhouette.astype(np.float32)).reshape(-1, 2)
        _fill_polygon(image, hull, np.array(base, np.float32) * 0.55, opacity)
    for index, (value, normal, corners) in enumerate(faces):
        if (body if index != uppermost else top) and camera.faces_camera(corners.mean(axis=0), normal):
            # A marbled die's veins are its own: seeded by where it lies.
            marble = int(1000 * abs(die.x) + abs(die.y)) if die.marbled else None
            key = (value, die.colour, die.pips, marble)
            if key not in textures:
                textures[key] = face_texture(value, base, PIP_COLOURS[die.pips][0], marble)
            colour, alpha = textures[key]
            _paste_quad(image, colour * _shade(normal, light), alpha * opacity, camera.project(corners))


def render_dice(image: np.ndarray, scene: Scene, dice: Sequence[DieSpec], textures: dict) -> None:
    """Dice are painted far to near, but the top faces of the dice lying flat go on after every such
    die's body: all at one height, they cannot be hidden by another flat die (whose sides, nearer the
    camera, may overlap them in the picture). Dice that lean or fly are above them and go on last."""
    far_first = sorted(dice, key=lambda d: -float(np.linalg.norm(scene.camera.position - d.centre())))
    flat = [die for die in far_first if not die.tilt and not die.lift]
    for die in flat:
        _paint_die(image, scene, die, textures, body=True, top=False)
    for die in flat:
        _paint_die(image, scene, die, textures, body=False, top=True)
    for die in far_first:
        if die.tilt or die.lift:
            _paint_die(image, scene, die, textures, body=True, top=True)


def render_shadows(image: np.ndarray, scene: Scene, dice: Sequence[DieSpec]) -> None:
    """Hard shadows of the dice on the floor, cast away from the light."""
    light = np.array(scene.light)
    mask = np.zeros(image.shape[:2], np.float32)
    for die in dice:
        points = _rounded_hull(die)
        on_floor = points - points[:, 2:3] / light[2] * light
        outline = cv2.convexHull(scene.camera.project(on_floor).astype(np.float32)).reshape(-1, 2)
        cv2.fillPoly(mask, [np.round(outline * 16).astype(np.int32)], 1.0, lineType=cv2.LINE_AA, shift=4)
    soft = cv2.GaussianBlur(mask, (0, 0), max(scene.width / 640, 1.0))
    image *= (1 - 0.45 * soft)[..., None]


def render_tray(scene: Scene, rng: np.random.Generator) -> tuple[np.ndarray, list]:
    """The table, the tray floor and walls; returns the image and the near walls to draw over the dice."""
    w, h = scene.width, scene.height
    camera, light = scene.camera, np.array(scene.light)
    image = felt_texture(rng, w, h, scene.table_colour)
    tw, td = scene.tray_size
    wall = scene.wall_height
    floor_colour = TRAY_COLOURS[scene.tray_colour]
    floor = felt_texture(rng, 512, int(512 * td / tw), floor_colour)
    floor_corners = np.array([[-tw / 2, td / 2, 0], [tw / 2, td / 2, 0], [tw / 2, -td / 2, 0], [-tw / 2, -td / 2, 0]])
    _paste_quad(image, floor, np.ones(floor.shape[:2], np.float32), camera.project(floor_corners))
    wall_colour = np.array(floor_colour, np.float32) * 0.8
    thickness = 8.0
    near_walls = []
    for axis, sign in ((0, -1), (0, 1), (1, -1), (1, 1)):
        inward = np.zeros(3)
        inward[axis] = -sign
        half_len = (td if axis == 0 else tw) / 2 + thickness
        edge = (tw if axis == 0 else td) / 2
        along = np.zeros(3)
        along[1 - axis] = 1

        def quad(offset: float, z0: float, z1: float) -> np.ndarray:
            base = np.zeros(3)
            base[axis] = sign * offset
            return np.array([base - along * half_len + [0, 0, z1], base + along * half_len + [0, 0, z1],
                             base + along * half_len + [0, 0, z0], base - along * half_len + [0, 0, z0]])

        inner = quad(edge, 0, wall)
        outer = quad(edge + thickness, 0, wall)
        rim = np.array([inner[0], inner[1], outer[1], outer[0]])
        parts = []
        if camera.faces_camera(inner.mean(axis=0), inward):
            parts.append((inner, inward))
        else:
            parts.append((outer, -inward))
        parts.append((rim, np.array([0, 0, 1.0])))
        for quad_points, normal in parts:
            polygon = camera.project(quad_points)
            shade = _shade(normal, light)
            if camera.faces_camera(inner.mean(axis=0), inward):
                _fill_polygon(image, polygon, wall_colour * shade)
            else:
                near_walls.append((polygon, wall_colour * shade))
    return image, near_walls


def render_hand(image: np.ndarray, scene: Scene) -> None:
    """A forearm and hand: a shaded capsule with fingers, casting a soft shadow."""
    assert scene.hand is not None
    start, tip = np.array(scene.hand[0]), np.array(scene.hand[1])
    skin = scene.hand[2]
    direction = (tip - start) / max(np.linalg.norm(tip - start), 1e-6)
    width = scene.width * 0.09
    palm = tip - direction * width * 0.9
    normal = np.array([-direction[1], direction[0]])
    shadow = np.zeros(image.shape[:2], np.float32)
    body = np.zeros(image.shape[:2], np.float32)
    for target, offset in ((shadow, np.array(scene.light[:2]) * -width * 0.6), (body, np.zeros(2))):
        cv2.line(target, tuple(np.round(start + offset).astype(int)), tuple(np.round(palm + offset).astype(int)),
                 1.0, int(width), cv2.LINE_AA)
        cv2.ellipse(target, tuple(np.round(palm + offset).astype(int)), (int(width * 0.75), int(width * 0.6)),
                    math.degrees(math.atan2(direction[1], direction[0])), 0, 360, 1.0, -1, cv2.LINE_AA)
        for k in (-1.5, -0.5, 0.5, 1.5):
            base = palm + normal * k * width * 0.22 + offset
            finger_tip = base + direction * width * (0.9 - 0.12 * abs(k))
            cv2.line(target, tuple(np.round(base).astype(int)), tuple(np.round(finger_tip).astype(int)), 1.0,
                     int(width * 0.2), cv2.LINE_AA)
    soft = cv2.GaussianBlur(shadow, (0, 0), width * 0.3)
    image *= (1 - 0.4 * soft)[..., None]
    yy, xx = np.mgrid[0:image.shape[0], 0:image.shape[1]].astype(np.float32)
    across = ((xx - start[0]) * normal[0] + (yy - start[1]) * normal[1]) / width
    shading = (1.05 - 0.35 * np.clip(np.abs(across), 0, 1))[..., None]
    m = body[..., None]
    image *= 1 - m
    image += np.array(skin, np.float32) * shading * m


def _lighting(image: np.ndarray, scene: Scene) -> None:
    h, w = image.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    x = xx / w - 0.5
    y = yy / h - 0.5
    gx, gy, vignette = scene.gradient
    factor = 1 + gx * x + gy * y - vignette * (x * x + y * y) * 2
    image *= factor[..., None]
    for gxp, gyp, radius, strength in scene.glare:
        spot = np.exp(-((xx - gxp) ** 2 + (yy - gyp) ** 2) / (2 * radius * radius)) * strength * 255
        image += spot[..., None]


def render(scene: Scene) -> np.ndarray:
    """The BGR uint8 picture of a scene, with its lighting, blur and sensor noise."""
    image, near_walls = render_tray(scene, np.random.default_rng(scene.texture_seed))
    render_shadows(image, scene, scene.dice)
    render_dice(image, scene, scene.dice, {})
    for polygon, colour in near_walls:
        _fill_polygon(image, polygon, colour)
    if scene.hand is not None:
        render_hand(image, scene)
    _lighting(image, scene)
    if scene.motion_blur is not None:
        length, angle = scene.motion_blur
        kernel = np.zeros((int(length) | 1, int(length) | 1), np.float32)
        centre = kernel.shape[0] // 2
        dx, dy = math.cos(math.radians(angle)) * centre, math.sin(math.radians(angle)) * centre
        cv2.line(kernel, (round(centre - dx), round(centre - dy)), (round(centre + dx), round(centre + dy)), 1.0)
        image = cv2.filter2D(image, -1, kernel / kernel.sum())
    if scene.blur_sigma > 0.2:
        image = cv2.GaussianBlur(image, (0, 0), scene.blur_sigma)
    noise = np.random.default_rng((scene.texture_seed, scene.frame)).normal(0, scene.noise_sigma, image.shape)
    image += noise.astype(np.float32)
    return np.clip(image + 0.5, 0, 255).astype(np.uint8)


# ----------------------------------------------------------------------------------------------- labels


def die_label(scene: Scene, die: DieSpec) -> dict:
    """Where a die's top face lands in the picture: value, centre, size, angle and corners."""
    value, normal, corners = max(die.faces(), key=lambda face: face[1][2])
    points = scene.camera.project(corners)
    centre = points.mean(axis=0)
    sides = np.linalg.norm(points - np.roll(points, -1, axis=0), axis=1)
    edge = points[1] - points[0]
    return {
        "value": int(value),
        "x": round(float(centre[0]), 1),
        "y": round(float(centre[1]), 1),
        "size": round(float(sides.mean()), 1),
        "angle": round(float(math.degrees(math.atan2(edge[1], edge[0])) % 90), 1),
        "corners": [[round(float(px), 1), round(float(py), 1)] for px, py in points],
        "colour": die.colour,
        "pips": die.pips,
        "translucent": die.translucent,
        "cocked": bool(die.tilt),
    }


def truth(scene: Scene, image_name: str) -> dict:
    dice = [die_label(scene, die) for die in scene.dice]
    return {
        "image": image_name,
        "width": scene.width,
        "height": scene.height,
        "status": "unsure" if scene.problems else "ok",
        "problems": list(scene.problems),
        "values": sorted(d["value"] for d in dice),
        "tray": scene.tray_colour,
        "dice": dice,
    }


def yolo_lines(label: dict) -> list[str]:
    """One `class cx cy w h` line per die (class = value - 1), normalised, boxing the top face."""
    lines = []
    for die in label["dice"]:
        corners = np.array(die["corners"])
        (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
        lines.append(f"{die['value'] - 1} {(x0 + x1) / 2 / label['width']:.6f} {(y0 + y1) / 2 / label['height']:.6f} "
                     f"{(x1 - x0) / label['width']:.6f} {(y1 - y0) / label['height']:.6f}")
    return lines


def sample_plan(count: int, first_seed: int) -> list[tuple[str, int, str | None]]:
    """(name, seed, distraction) for each picture: about one in six carries a distraction."""
    plan = []
    for i in range(count):
        seed = first_seed + i
        distraction = DISTRACTIONS[(i // 6) % len(DISTRACTIONS)] if i % 6 == 5 else None
        plan.append((f"synth_{seed:05d}" + (f"_{distraction}" if distraction else ""), seed, distraction))
    return plan


def write_sample(out: Path, quality: int, variety: bool, planned: tuple[str, int, str | None]) -> dict:
    """Render one planned picture into out/images, with its truth file and YOLO label; returns the truth."""
    name, seed, distraction = planned
    scene = random_scene(seed, distraction, variety=variety)
    image_name = f"{name}.jpg"
    if not cv2.imwrite(str(out / "images" / image_name), render(scene), [cv2.IMWRITE_JPEG_QUALITY, quality]):
        raise OSError(f"could not write {out / 'images' / image_name}")
    label = truth(scene, image_name)
    label["seed"] = seed
    (out / "truth" / f"{name}.json").write_text(json.dumps(label, indent=1) + "\n")
    (out / "labels" / f"{name}.txt").write_text("".join(line + "\n" for line in yolo_lines(label)))
    return label


def write_samples(out: Path, count: int, first_seed: int = 0, quality: int = 85, jobs: int = 1,
                  variety: bool = False) -> list[dict]:
    """Render `count` pictures into out/ (images/, truth/, labels/, manifest.csv) with `jobs` processes;
    `variety` as in pick_colours."""
    for folder in ("images", "labels", "truth"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    (out / "labels" / "classes.txt").write_text("".join(f"{v}\n" for v in range(1, 7)))
    write = partial(write_sample, out, quality, variety)
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            labels = list(pool.map(write, sample_plan(count, first_seed), chunksize=8))
    else:
        labels = [write(planned) for planned in sample_plan(count, first_seed)]
    with open(out / "manifest.csv", "w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["image", "values", "status"])
        for label in labels:
            writer.writerow([label["image"], "-".join(map(str, label["values"])), label["status"]])
    return labels

# ----------------------------------------------------------------------------------------------- sequences

SEQUENCE_FPS = 10.0
SEQUENCE_SIZE = (640, 480)  # the smallest frame the reader is meant for


def rolling(rest: DieSpec, progress: float, entry: tuple[float, float]) -> DieSpec:
    """The die `progress` (0..1) of the way from `entry` to its resting pose: it decelerates, rolls
    about the axis across its path (so it lands exactly as it rests) and hops, lower and lower."""
    remaining = (1 - progress) ** 2
    dx, dy = rest.x - entry[0], rest.y - entry[1]
    distance = math.hypot(dx, dy) * remaining
    if distance < 1e-6:
        return rest
    axis = np.array([dy, -dx, 0.0]) / max(math.hypot(dx, dy), 1e-9)
    return replace(rest, x=rest.x - dx * remaining, y=rest.y - dy * remaining,
                   spin=tuple(axis * distance / (rest.size / 2)),
                   lift=float(rest.size * 0.8 * remaining * abs(math.sin(distance / rest.size))))


def _hand_at(start: tuple[float, float], tip: tuple[float, float], reach: float) -> tuple[float, float]:
    return (start[0] + (tip[0] - start[0]) * reach, start[1] + (tip[1] - start[1]) * reach)


def _entry_point(rng: np.random.Generator, tray: tuple[float, float]) -> tuple[float, float]:
    side = rng.choice([-1.0, 1.0])
    return float(side * tray[0] * 0.55), float(rng.uniform(-0.3, 0.3) * tray[1])


def sequence_scenes(name: str, seed: int) -> tuple[list[Scene], dict]:
    """The scenes of one named frame sequence and what a settle detector must report on it.

    The description's `rest_starts` are the times at which a new resting scene begins (each must be
    reported once); `hand` lists the intervals with a hand in view (nothing may be reported then)."""
    base = random_scene(seed, size=SEQUENCE_SIZE, dice_count=5)
    # sensor noise is what JPEG stores worst: modest except where noise is the point
    base = replace(base, noise_sigma=5.0 if name == "noisy_throw" else min(base.noise_sigma, 1.5))
    if name == "noisy_throw":
        base = replace(base, gradient=(0.3, -0.3, 0.3))
    rng = np.random.default_rng(seed + 1)
    entry = _entry_point(rng, base.tray_size)
    rest = list(base.dice)
    frames: list[tuple[tuple[DieSpec, ...], tuple | None]] = []
    rest_starts: list[int] = []
    hand: list[tuple[int, int]] = []
    turn: dict[str, list[list[int]]] = {}

    def throw(dice: list[DieSpec], moving: set[int], frames_in_motion: int) -> None:
        for k in range(frames_in_motion):
            progress = (k + 1) / (frames_in_motion + 1)
            frames.append((tuple(rolling(d, progress, entry) if i in moving else d for i, d in enumerate(dice)), None))
        rest_starts.append(len(frames))

    def hold(dice: Sequence[DieSpec], count: int, hand_pose=None) -> None:
        frames.extend((tuple(dice), hand_pose) for _ in range(count))

    def reach(dice: Sequence[DieSpec], arm, steps: int, still: int) -> None:
        start, tip, skin = arm
        first = len(frames)
        for k in range(steps):
            frames.append((tuple(dice), (start, _hand_at(start, tip, (k + 1) / steps), skin)))
        hold(dice, still, arm)
        for k in range(steps):
            frames.append((tuple(dice), (start, _hand_at(start, tip, 1 - (k + 1) / steps), skin)))
        hand.append((first, len(frames)))

    if name in ("single_throw", "noisy_throw"):
        hold([], 2)
        throw(rest, set(range(len(rest))), 10)
        hold(rest, 8)
    elif name == "two_throws":
        hold([], 1)
        throw(rest, set(range(len(rest))), 8)
        hold(rest, 8)
        again = {0, 1}
        rerolled = [replace(d, value=int(rng.integers(1, 7)), yaw=float(rng.uniform(0, 360))) if i in again else d
                    for i, d in enumerate(rest)]
        moved = place_dice(rng, 7, base.tray_size, rest[0].size, touching=0.0)
        taken = [(d.x, d.y) for i, d in enumerate(rest) if i not in again]
        free = [p for p in moved if all(math.hypot(p[0] - x, p[1] - y) > rest[0].size * 1.5 for x, y in taken)]
        for i, (x, y, _yaw) in zip(sorted(again), free):
            rerolled[i] = replace(rerolled[i], x=x, y=y)
        throw(rerolled, again, 6)
        hold(rerolled, 8)
    elif name in ("kept_aside", "kept_in_tray"):
        # A whole turn of three throws. The second keeps dice 3 and 4 and throws 0, 1 and 2; the
        # third throws die 3 again (kept before) with die 2. Kept dice are set aside out of view,
        # or left lying where they are in the tray.
        aside = name == "kept_aside"
        hold([], 1)
        throw(rest, set(range(len(rest))), 8)
        hold(rest, 8)
        dice = list(rest)
        # what the turn holds after each throw: the dice kept from the roll before, and all five
        turn = {"kept_at_rest": [[]], "rolls_at_rest": [sorted(d.value for d in rest)]}
        for again in ({0, 1, 2}, {2, 3}):
            dice = [replace(d, value=int(rng.integers(1, 7)), yaw=float(rng.uniform(0, 360))) if i in again else d
                    for i, d in enumerate(dice)]
            taken = [(d.x, d.y) for d in dice]
            spots = place_dice(rng, 12, base.tray_size, rest[0].size, touching=0.0)
            free = [p for p in spots if all(math.hypot(p[0] - x, p[1] - y) > rest[0].size * 1.5 for x, y in taken)]
            for i, (x, y, _yaw) in zip(sorted(again), free[:len(again)], strict=True):
                dice[i] = replace(dice[i], x=x, y=y)
            shown = [i for i in range(len(dice)) if i in again or not aside]
            throw([dice[i] for i in shown], {j for j, i in enumerate(shown) if i in again}, 6)
            hold([dice[i] for i in shown], 8)
            turn["kept_at_rest"].append(sorted(d.value for i, d in enumerate(dice) if i not in again))
            turn["rolls_at_rest"].append(sorted(d.value for d in dice))
    elif name == "hand_in_tray":
        rest_starts.append(0)
        hold(rest, 5)
        reach(rest, _random_hand(rng, base.camera, rest), 3, 7)
        hold(rest, 6)
    else:
        raise ValueError(f"unknown sequence {name!r}; choose from {', '.join(SEQUENCES)}")
    times = [round(i / SEQUENCE_FPS + float(rng.uniform(-0.004, 0.004)) * (i > 0), 4) for i in range(len(frames))]
    scenes = [replace(base, dice=dice, hand=arm, frame=i, glare=()) for i, (dice, arm) in enumerate(frames)]
    description = {
        "fps": SEQUENCE_FPS,
        "times": times,
        "rest_starts": [times[i] for i in rest_starts],
        "hand": [[times[a], times[b - 1]] for a, b in hand],
        "values_at_rest": [sorted(d.top_value() for d in frames[i][0]) for i in rest_starts],
        **turn,
    }
    return scenes, description


SEQUENCES = ("single_throw", "two_throws", "hand_in_tray", "noisy_throw", "kept_aside", "kept_in_tray")


def write_sequences(out: Path, first_seed: int = 500, quality: int = 65) -> list[str]:
    """Each sequence as out/<name>/NNN.jpg plus out/<name>/sequence.json (frame times and truth)."""
    for offset, name in enumerate(SEQUENCES):
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        scenes, description = sequence_scenes(name, first_seed + offset)
        files = []
        for index, scene in enumerate(scenes):
            files.append(f"{index:03d}.jpg")
            if not cv2.imwrite(str(folder / files[-1]), render(scene), [cv2.IMWRITE_JPEG_QUALITY, quality]):
                raise OSError(f"could not write {folder / files[-1]}")
        description = {"name": name, "frames": files, **description}
        (folder / "sequence.json").write_text(json.dumps(description, indent=1) + "\n")
    return list(SEQUENCES)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.synth", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write images/, labels/, truth/ into")
    parser.add_argument("--count", type=int, default=54, help="number of pictures (default 54)")
    parser.add_argument("--first-seed", type=int, default=0, help="seed of the first picture (default 0)")
    parser.add_argument("--quality", type=int, default=85, help="JPEG quality (default 85)")
    parser.add_argument("--sequences", action="store_true", help="also write the settle-detection sequences")
    parser.add_argument("--jobs", type=int, default=1, help="processes rendering at once (default 1)")
    parser.add_argument("--variety", action="store_true",
                        help="also dim red pips on dark dice and marbled dice (for training; not samples/)")
    args = parser.parse_args(argv)
    if args.count < 0 or not 1 <= args.quality <= 100 or args.jobs < 1:
        parser.error("--count must be 0 or more, --quality within 1..100 and --jobs 1 or more")
    labels = write_samples(args.out, args.count, args.first_seed, args.quality, args.jobs, args.variety)
    print(f"wrote {len(labels)} pictures to {args.out}")
    if args.sequences:
        names = write_sequences(args.out / "sequences")
        print(f"wrote sequences {', '.join(names)} to {args.out / 'sequences'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
