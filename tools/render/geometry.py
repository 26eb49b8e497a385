"""The scene's geometry in tray millimetres, without Blender: where the pips sit on a die, how a die
rests against a wall or another die, what the camera sees of each top face.

The die's own frame and pose are vision.synth's (FACE_VALUES, PIP_LAYOUTS, DieSpec), so the rendered
dice and the drawn ones carry the same, right-handed numbering.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from vision.synth import FACE_VALUES, PIP_LAYOUTS, Camera, DieSpec

# A Raspberry Pi Camera Module 3 (Sony IMX708, 4.74 mm lens, 1.4 um pixels, 4608x2592). A 4:3 picture
# uses the sensor's full height and the middle 4:3 of its width.
PI_CAM3_FOCAL_MM = 4.74
PI_CAM3_SENSOR_MM = (4608 * 1.4e-3, 2592 * 1.4e-3)
PI_CAM3_FSTOP = 1.8


def sensor_width_mm(width: int, height: int) -> float:
    """The width of sensor a `width` x `height` picture is read from (full height, cropped width)."""
    full_w, full_h = PI_CAM3_SENSOR_MM
    return min(full_w, full_h * width / height)


def focal_pixels(width: int, height: int) -> float:
    return PI_CAM3_FOCAL_MM / sensor_width_mm(width, height) * width


def face_axes(normal: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, u, v): a face's outward normal and its two in-face axes in the die's frame, as vision.synth
    lays its pip textures out."""
    n = np.array(normal, float)
    u = np.roll(n, 1) if n.sum() > 0 else -np.roll(n, 1)
    return n, u, np.cross(n, u)


def pip_centres(size: float, spread: float = 1.0) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(face value, outward normal, pip centre) of every pip in the die's own frame (millimetres, die
    centred on the origin); `spread` scales how far the outer pips sit from the face's middle."""
    half = size / 2
    pips = []
    for normal, value in FACE_VALUES.items():
        n, u, v = face_axes(normal)
        for px, py in PIP_LAYOUTS[value]:
            pips.append((value, n, n * half + (px * u + py * v) * half * spread))
    return pips


def die_centre(die: DieSpec) -> np.ndarray:
    return die.corners().mean(axis=0)


def top_face(die: DieSpec) -> tuple[int, np.ndarray, np.ndarray]:
    """(value, world normal, 4 world corners) of the face pointing most nearly up."""
    return max(die.faces(), key=lambda face: face[1][2])


def footprint(die: DieSpec) -> np.ndarray:
    """The die's shadow on the tray floor straight down: the convex hull of its corners' x, y."""
    points = die.corners()[:, :2]
    return _convex_hull(points)


def _convex_hull(points: np.ndarray) -> np.ndarray:
    ordered = sorted(map(tuple, np.round(points, 9)))
    if len(ordered) < 3:
        return np.array(ordered)

    def turns_left(o: tuple, a: tuple, b: tuple) -> bool:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]) > 0

    def half(seq: list) -> list:
        out: list = []
        for p in seq:
            while len(out) >= 2 and not turns_left(out[-2], out[-1], p):
                out.pop()
            out.append(p)
        return out

    lower, upper = half(ordered), half(ordered[::-1])
    return np.array(lower[:-1] + upper[:-1])


def polygons_overlap(a: np.ndarray, b: np.ndarray, gap: float = 0.0) -> bool:
    """Separating-axis test of two convex polygons; they count as overlapping closer than `gap`."""
    for polygon in (a, b):
        for i in range(len(polygon)):
            edge = polygon[(i + 1) % len(polygon)] - polygon[i]
            axis = np.array([-edge[1], edge[0]]) / max(float(np.hypot(*edge)), 1e-12)
            pa, pb = a @ axis, b @ axis
            if pa.max() + gap <= pb.min() or pb.max() + gap <= pa.min():
                return False
    return True


@dataclass(frozen=True)
class Tray:
    """A tray with walls: "rect" (`size` = inner width, depth) or "round" (`size` = inner diameter twice)."""

    shape: str
    size: tuple[float, float]
    wall_height: float
    wall_thickness: float

    def contains(self, xy: np.ndarray, margin: float = 0.0) -> np.ndarray:
        """Whether each point lies on the floor inside the walls, at least `margin` from them."""
        xy = np.atleast_2d(xy)
        if self.shape == "round":
            return np.hypot(xy[:, 0], xy[:, 1]) <= self.size[0] / 2 - margin
        return (np.abs(xy[:, 0]) <= self.size[0] / 2 - margin) & (np.abs(xy[:, 1]) <= self.size[1] / 2 - margin)

    def inner_rim(self, points: int = 64) -> np.ndarray:
        """The inner top edge of the walls as a closed polygon (world millimetres)."""
        return self.outline(self.wall_height, 0.0, points)

    def outline(self, z: float, grow: float, points: int = 64) -> np.ndarray:
        w, d = self.size[0] / 2 + grow, self.size[1] / 2 + grow
        if self.shape == "round":
            t = np.linspace(0, 2 * math.pi, points, endpoint=False)
            return np.stack([w * np.cos(t), w * np.sin(t), np.full_like(t, z)], axis=1)
        return np.array([[-w, -d, z], [w, -d, z], [w, d, z], [-w, d, z]])

    def in_wall(self, points: np.ndarray) -> np.ndarray:
        """Whether each world point lies inside the solid of the walls."""
        x, y, z = points[..., 0], points[..., 1], points[..., 2]
        low = (z >= 0) & (z <= self.wall_height)
        t = self.wall_thickness
        if self.shape == "round":
            r = np.hypot(x, y)
            return low & (r >= self.size[0] / 2) & (r <= self.size[0] / 2 + t)
        w, d = self.size[0] / 2, self.size[1] / 2
        outer = (np.abs(x) <= w + t) & (np.abs(y) <= d + t)
        inner = (np.abs(x) < w) & (np.abs(y) < d)
        return low & outer & ~inner

    def wall_direction(self, xy: np.ndarray) -> np.ndarray:
        """For a point on the floor, the unit direction to the nearest wall (outwards)."""
        if self.shape == "round":
            r = float(np.hypot(*xy))
            return np.array([1.0, 0.0]) if r < 1e-9 else np.asarray(xy, float) / r
        gaps = [self.size[0] / 2 - xy[0], self.size[0] / 2 + xy[0], self.size[1] / 2 - xy[1], self.size[1] / 2 + xy[1]]
        return np.array([(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)][int(np.argmin(gaps))])


def pushed_until(die: DieSpec, direction: np.ndarray, fits, far: float) -> DieSpec | None:
    """The die moved along `direction` (unit, tray plane) as far as `fits` allows, up to `far` mm, to
    within 0.05 mm: where it comes to touch whatever `fits` stops it at. None if it never fits."""
    def moved(step: float) -> DieSpec:
        return replace(die, x=die.x + float(direction[0]) * step, y=die.y + float(direction[1]) * step)

    if not fits(moved(0.0)):
        return None
    low, high = 0.0, far
    if fits(moved(high)):
        return moved(high)
    while high - low > 0.05:
        middle = (low + high) / 2
        low, high = (middle, high) if fits(moved(middle)) else (low, middle)
    return moved(low)


def leaning(value: int, size: float, towards_deg: float, tilt_deg: float) -> DieSpec:
    """A die at the origin cocked by `tilt_deg` towards the direction `towards_deg` (tray plane), one
    edge on the floor: its tilt axis lies along a face, so it rests on an edge, not a corner."""
    # Rotating about axis a lifts the top towards a x z; a = z x d makes that d.
    return DieSpec(value, 0.0, 0.0, size, towards_deg, "", "", tilt=tilt_deg, tilt_axis=towards_deg + 90.0)


# ----------------------------------------------------------------------------------------------- solids


@dataclass(frozen=True)
class Capsule:
    """A rounded rod (part of a hand or arm): the points within `radius` of the segment a-b."""

    a: tuple[float, float, float]
    b: tuple[float, float, float]
    radius: float

    def contains(self, points: np.ndarray) -> np.ndarray:
        a, b = np.array(self.a), np.array(self.b)
        ab = b - a
        t = np.clip(((points - a) @ ab) / max(float(ab @ ab), 1e-12), 0, 1)
        closest = a + t[..., None] * ab
        return np.linalg.norm(points - closest, axis=-1) <= self.radius


def die_contains(die: DieSpec, points: np.ndarray) -> np.ndarray:
    """Whether each world point lies inside the die's cube."""
    local = (points - die_centre(die)) @ die.rotation()
    return np.all(np.abs(local) <= die.size / 2, axis=-1)


def top_face_samples(die: DieSpec, per_side: int = 7) -> np.ndarray:
    """Points spread evenly over the die's top face, a hair above it (world millimetres)."""
    _, normal, corners = top_face(die)
    s = (np.arange(per_side) + 0.5) / per_side
    a, b, d = corners[0], corners[1], corners[3]
    grid = a + s[:, None, None] * (b - a) + s[None, :, None] * (d - a)
    return grid.reshape(-1, 3) + normal * 0.05


def visible_fraction(camera: Camera, die: DieSpec, others: Sequence[DieSpec], tray: Tray,
                     capsules: Sequence[Capsule] = ()) -> float:
    """The share of the die's top face the camera sees: inside the picture, facing the lens, and not
    hidden behind another die, a tray wall or a hand."""
    _, normal, _ = top_face(die)
    points = top_face_samples(die)
    seen = (camera.position - points) @ normal > 0
    pixels = camera.project(points)
    seen &= (pixels[:, 0] >= 0) & (pixels[:, 0] < camera.width) & (pixels[:, 1] >= 0) & (pixels[:, 1] < camera.height)
    tops = [d.corners()[:, 2].max() for d in others] + [tray.wall_height]
    tops += [max(c.a[2], c.b[2]) + c.radius for c in capsules]
    ceiling = max(tops)
    towards = camera.position - points
    if not seen.any() or ceiling <= points[:, 2].min() or towards[:, 2].min() <= 0:
        return float(seen.mean())
    # march up every sight line to the highest obstacle in steps of at most 0.25 mm
    reach = np.maximum(ceiling - points[:, 2], 0) / towards[:, 2]
    steps = max(2, math.ceil(float((reach * np.linalg.norm(towards, axis=1)).max()) / 0.25))
    lines = points[:, None, :] + np.linspace(0, 1, steps)[None, :, None] * (reach[:, None] * towards)[:, None, :]
    blocked = tray.in_wall(lines).any(axis=1)
    for other in others:
        blocked |= die_contains(other, lines).any(axis=1)
    for capsule in capsules:
        blocked |= capsule.contains(lines).any(axis=1)
    return float((seen & ~blocked).mean())
