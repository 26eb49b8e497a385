"""Calibration of the empty tray: where the tray is in the picture, whether the light is good, and
the exposure to lock so pip contrast stays the same all game.

The tray is taken to be the uniform region under the middle of the picture (the camera looks straight
down on it); its colour is measured there and every connected pixel of about that colour belongs to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .frames import Camera

Region = tuple[int, int, int, int]  # x, y, width, height in pixels
MIN_TRAY_FRACTION = 0.05
MIN_FILL = 0.6
MAX_CENTRE_SPREAD = 12.0  # Lab units; felt or cork under blur stays well below


class CalibrationError(ValueError):
    """The tray or the light is not usable; the message says what to change."""


@dataclass(frozen=True)
class Calibration:
    region: Region
    image: np.ndarray = field(repr=False)
    exposure: dict = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def config_changes(self) -> dict:
        """The settings this calibration writes into the configuration file."""
        changes: dict = {"tray_region": list(self.region)}
        if self.exposure:
            changes.update(exposure_time_us=int(self.exposure["ExposureTime"]),
                           analogue_gain=float(self.exposure["AnalogueGain"]),
                           colour_gains=[float(g) for g in self.exposure["ColourGains"]])
        return changes


def parse_region(text: str) -> Region:
    """'x,y,width,height' in pixels."""
    parts = [part for part in text.replace(" ", ",").split(",") if part]
    try:
        values = tuple(int(part) for part in parts)
    except ValueError:
        raise ValueError(f"region must be four whole numbers x,y,width,height, got {text!r}") from None
    if len(values) != 4 or min(values) < 0 or values[2] == 0 or values[3] == 0:
        raise ValueError(f"region must be four whole numbers x,y,width,height (width and height above 0), got {text!r}")
    return values  # type: ignore[return-value]


def check_region(region: Region, shape: tuple[int, ...]) -> Region:
    x, y, width, height = region
    if x + width > shape[1] or y + height > shape[0]:
        raise CalibrationError(f"region {x},{y},{width},{height} does not fit in the {shape[1]}x{shape[0]} picture")
    return region


def find_tray_region(image: np.ndarray, *, tolerance: float = 14.0) -> Region:
    """Bounding box of the uniform region under the centre of `image` (BGR uint8). The mask is smoothed
    over 7 px, so a strip of table narrower than that at the picture's edge is taken for tray."""
    import cv2

    height, width = image.shape[:2]
    lab = cv2.cvtColor(cv2.GaussianBlur(image, (5, 5), 0), cv2.COLOR_BGR2LAB).astype(np.float32)
    centre = lab[height * 2 // 5: height * 3 // 5, width * 2 // 5: width * 3 // 5].reshape(-1, 3)
    tray_colour = np.median(centre, axis=0)
    # a textured tray (felt, cork) spreads its colours; allow for that spread on top of the tolerance
    spread = float(np.median(np.linalg.norm(centre - tray_colour, axis=1)))
    if spread > MAX_CENTRE_SPREAD:
        raise CalibrationError("the middle of the picture is not a uniform surface: centre the empty tray "
                               "under the camera, or pass --region x,y,width,height")
    distance = np.linalg.norm(lab - tray_colour, axis=2)
    mask = (distance < tolerance + 3 * spread).astype(np.uint8)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7))
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, kernel)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, kernel)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
    # the biggest piece under the centre, so a die or crumb at the very centre does not hide the tray
    centre_labels = labels[height * 2 // 5: height * 3 // 5, width * 2 // 5: width * 3 // 5].ravel()
    counts = np.bincount(centre_labels, minlength=count)
    counts[0] = 0
    label = int(counts.argmax())
    if counts[label] == 0:
        raise CalibrationError("the middle of the picture is not a uniform surface: centre the empty tray "
                               "under the camera, or pass --region x,y,width,height")
    x, y, w, h, area = (int(v) for v in stats[label])
    if (x, y, w, h) == (0, 0, width, height):
        raise CalibrationError("no tray edge found: the tray's colour reaches every side of the picture. If the "
                               f"tray fills the view pass --region 0,0,{width},{height}; else use a tray that "
                               "contrasts with the table")
    if area < MIN_TRAY_FRACTION * width * height:
        raise CalibrationError(f"the uniform area under the centre covers only {area / (width * height):.0%} of "
                               "the picture: is the tray empty and in view? Or pass --region")
    if area < MIN_FILL * w * h:
        raise CalibrationError("the tray's colour runs into its surroundings (the area found is not tray-shaped): "
                               "use a tray that contrasts with the table, or pass --region")
    return x, y, w, h


def assess_lighting(image: np.ndarray, region: Region) -> list[str]:
    """Advice on the light over the tray: glare, darkness, one side brighter than the other."""
    import cv2

    x, y, width, height = region
    grey = cv2.cvtColor(image[y:y + height, x:x + width], cv2.COLOR_BGR2GRAY).astype(np.float32)
    warnings = []
    clipped = float(np.mean(grey >= 250))
    if clipped > 0.01:
        warnings.append(f"{clipped:.0%} of the tray is blown out white: glare; use diffuse light or a matte tray")
    mean = float(grey.mean())
    if mean < 50:
        warnings.append(f"the tray is dark (mean brightness {mean:.0f} of 255): add light")
    quarters = [block.mean() for half in np.array_split(grey, 2, axis=0) for block in np.array_split(half, 2, axis=1)]
    if mean > 0 and (max(quarters) - min(quarters)) / mean > 0.25:
        warnings.append("the light is uneven across the tray (one corner over 25% brighter than another): "
                        "move the lamp above the tray or diffuse it")
    return warnings


def capture_empty_tray(camera: Camera, frames: int = 5, timeout: float = 5.0) -> np.ndarray:
    """The per-pixel median of several frames, so sensor noise does not move the tray's edge."""
    images = [camera.read(timeout=timeout).image for _ in range(frames)]
    return np.median(np.stack(images), axis=0).astype(np.uint8)


def calibrate(camera: Camera, region: Region | None = None, frames: int = 5) -> Calibration:
    image = capture_empty_tray(camera, frames)
    region = check_region(region, image.shape) if region is not None else find_tray_region(image)
    exposure = dict(getattr(camera, "locked_controls", {}) or {})
    return Calibration(region=region, image=image, exposure=exposure,
                       warnings=tuple(assess_lighting(image, region)))


def save_tray_image(calibration: Calibration, data_dir: Path) -> Path:
    """The empty tray with the region drawn on it, for the user to check."""
    import cv2

    path = data_dir / "calibration" / "empty-tray.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    marked = calibration.image.copy()
    x, y, width, height = calibration.region
    cv2.rectangle(marked, (x, y), (x + width - 1, y + height - 1), (0, 0, 255), 2)
    if not cv2.imwrite(str(path), marked):
        raise CalibrationError(f"cannot write {path}")
    return path
