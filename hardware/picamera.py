"""The Raspberry Pi camera through picamera2, imported only when this source is opened.

Pip contrast must not drift mid-game, so auto exposure and white balance run only until they settle
and are then locked, with the exposure time a whole multiple of the mains flicker period so that
lamps on 50 or 60 Hz do not put bands across the tray. Values saved by `yacht-table calibrate` skip
the settling and are applied as they are.
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass

import numpy as np

from .frames import BackgroundCamera, CameraUnavailable

PICAMERA2_MISSING = (
    "the Pi camera needs picamera2, which is not importable here. On Raspberry Pi OS: "
    "`sudo apt install python3-picamera2`, then create the venv with `python3 -m venv "
    "--system-site-packages .venv` so it can see the system package (see docs/raspberry-pi.md)"
)
# libcamera enum values, used as numbers so the adapter needs nothing from libcamera itself
AF_MODE_MANUAL = 0
AE_FLICKER_MANUAL = 1


@dataclass(frozen=True)
class PiCameraSettings:
    width: int = 1280
    height: int = 960
    swap_red_blue: bool = False
    ae_settle_seconds: float = 1.5
    exposure_time_us: int | None = None
    analogue_gain: float | None = None
    colour_gains: tuple[float, float] | None = None
    flicker_hz: int = 50
    lens_position: float | None = None


def flicker_period_us(flicker_hz: int) -> int | None:
    """Lamps on mains at f Hz brighten 2f times a second."""
    return round(1_000_000 / (2 * flicker_hz)) if flicker_hz else None


def flicker_safe_exposure(exposure_us: int, gain: float, flicker_hz: int) -> tuple[int, float]:
    """Round the exposure to the nearest whole number of flicker periods (at least one) and scale the
    gain so the picture keeps its brightness; the gain never goes below 1, the sensor's floor."""
    period = flicker_period_us(flicker_hz)
    if period is None:
        return exposure_us, gain
    rounded = max(1, round(exposure_us / period)) * period
    return rounded, max(1.0, gain * exposure_us / rounded)


def choose_sensor_mode(modes: list[dict], width: int, height: int) -> dict | None:
    """The smallest sensor mode covering the requested size: on most sensors a 2x2 binned mode,
    brighter and less noisy than cropping or scaling the full resolution."""
    covering = [mode for mode in modes if mode["size"][0] >= width and mode["size"][1] >= height]
    if not covering:
        return None
    return min(covering, key=lambda mode: (mode["size"][0] * mode["size"][1], -mode.get("bit_depth", 0)))


class PiCamera(BackgroundCamera):
    source = "pi"

    def __init__(self, settings: PiCameraSettings, picamera2_module):
        self.settings = settings
        cameras = picamera2_module.Picamera2.global_camera_info()
        if not cameras:
            raise CameraUnavailable("no Raspberry Pi camera detected "
                                    "(check the ribbon cable and `rpicam-hello --list-cameras`)")
        self.name = f"Pi camera {cameras[0].get('Model', '')}".strip()
        try:
            self._picam = picamera2_module.Picamera2()
        except (RuntimeError, IndexError) as error:
            raise CameraUnavailable(f"cannot open the Pi camera ({error}); is another program using it?") from None
        try:
            self._configure()
            self._picam.start()
            self.locked_controls = self._settle_and_lock()
        except Exception as error:  # libcamera reports start-up faults as RuntimeError and kin
            self._picam.close()
            raise CameraUnavailable(f"cannot start the Pi camera: {type(error).__name__}: {error}") from error
        self._start_grabbing()

    def _configure(self) -> None:
        settings = self.settings
        options = {"main": {"size": (settings.width, settings.height), "format": "RGB888"},
                   "buffer_count": 4}
        mode = choose_sensor_mode(list(getattr(self._picam, "sensor_modes", []) or []), settings.width,
                                  settings.height)
        if mode is not None:
            options["sensor"] = {"output_size": tuple(mode["size"]), "bit_depth": mode.get("bit_depth", 10)}
        start_controls: dict[str, int | float] = {}
        period = flicker_period_us(settings.flicker_hz)
        available = self._picam.camera_controls
        if period is not None and "AeFlickerMode" in available:
            start_controls.update(AeFlickerMode=AE_FLICKER_MANUAL, AeFlickerPeriod=period)
        if "AfMode" in available and settings.lens_position is not None:
            start_controls.update(AfMode=AF_MODE_MANUAL, LensPosition=settings.lens_position)
        self.start_controls = start_controls
        self._picam.configure(self._picam.create_video_configuration(controls=start_controls, **options))

    def _settle_and_lock(self) -> dict:
        settings = self.settings
        available = self._picam.camera_controls
        if "AfMode" in available and settings.lens_position is None:
            # Camera Module 3: focus once on the tray, then the lens stays put for the game
            self._picam.autofocus_cycle()
        if settings.exposure_time_us is not None and settings.analogue_gain is not None \
                and settings.colour_gains is not None:
            exposure, gain, gains = settings.exposure_time_us, settings.analogue_gain, settings.colour_gains
        else:
            time.sleep(settings.ae_settle_seconds)
            metadata = self._picam.capture_metadata()
            exposure = settings.exposure_time_us or int(metadata["ExposureTime"])
            gain = settings.analogue_gain or float(metadata["AnalogueGain"])
            red, blue = (float(g) for g in metadata["ColourGains"])
            gains = settings.colour_gains or (red, blue)
        exposure, gain = flicker_safe_exposure(exposure, gain, settings.flicker_hz)
        locked = {"AeEnable": False, "AwbEnable": False, "ExposureTime": exposure,
                  "AnalogueGain": round(gain, 3), "ColourGains": tuple(gains)}
        self._picam.set_controls(locked)
        return locked

    def _grab(self) -> np.ndarray:
        image = self._picam.capture_array("main")
        # "RGB888" arrives as B,G,R, OpenCV's own order; some camera/Pi combinations report it reversed
        return np.ascontiguousarray(image[:, :, 2::-1]) if self.settings.swap_red_blue else image

    def _release(self) -> None:
        self._picam.stop()
        self._picam.close()


NUMPY_MISMATCH = (
    "picamera2 is installed but will not load with this numpy ({error}). The venv holds a numpy other "
    "than the one Raspberry Pi OS built picamera2 against, usually numpy 2 pulled in by an OpenCV newer "
    "than 4.11.0.86. Reinstall with `.venv/bin/pip uninstall -y numpy opencv-python-headless && "
    ".venv/bin/pip install -e '.[pi]' -c hardware/pi-bookworm-constraints.txt`"
)


def open_pi_camera(**options) -> PiCamera:
    try:
        module = importlib.import_module("picamera2")
    except (ImportError, ValueError) as error:
        # an apt-built extension meeting the wrong numpy fails with "numpy.dtype size changed" or
        # "compiled using NumPy 1.x cannot be run in NumPy 2"
        if "numpy" in str(error).lower():
            raise CameraUnavailable(NUMPY_MISMATCH.format(error=error)) from None
        if isinstance(error, ImportError):
            raise CameraUnavailable(PICAMERA2_MISSING) from None
        raise
    return PiCamera(PiCameraSettings(**options), module)
