"""The Pi camera adapter, driven through a fake `picamera2` module that records what it is told."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hardware.camera import CameraUnavailable, open_camera
from hardware.picamera import (
    PICAMERA2_MISSING,
    choose_sensor_mode,
    flicker_period_us,
    flicker_safe_exposure,
)

IMX708_MODES = [
    {"size": (1536, 864), "bit_depth": 10},
    {"size": (2304, 1296), "bit_depth": 10},
    {"size": (4608, 2592), "bit_depth": 10},
]


class FakePicamera2:
    """Stands in for picamera2.Picamera2: delivers an RGB888-style picture and records every call."""

    cameras = [{"Model": "imx708"}]
    instances: list[FakePicamera2] = []
    metadata = {"ExposureTime": 23_000, "AnalogueGain": 2.0, "ColourGains": (1.8, 1.5)}
    controls_available = {"AfMode": (0, 2, 0), "LensPosition": (0.0, 15.0, 1.0), "AeFlickerMode": (0, 1, 0)}
    busy = False

    def __init__(self):
        if FakePicamera2.busy:
            raise RuntimeError("Failed to acquire camera: Device or resource busy")
        self.sensor_modes = IMX708_MODES
        self.camera_controls = dict(self.controls_available)
        self.configuration_requests = []
        self.configured = None
        self.controls = []
        self.calls = []
        FakePicamera2.instances.append(self)

    @staticmethod
    def global_camera_info():
        return FakePicamera2.cameras

    def create_video_configuration(self, **options):
        self.configuration_requests.append(options)
        return {"made_from": options}

    def configure(self, configuration):
        self.configured = configuration

    def start(self):
        self.calls.append("start")

    def autofocus_cycle(self):
        self.calls.append("autofocus_cycle")

    def capture_metadata(self):
        self.calls.append("capture_metadata")
        return dict(self.metadata)

    def set_controls(self, controls):
        self.controls.append(controls)

    def capture_array(self, name="main"):
        width, height = self.configuration_requests[-1]["main"]["size"]
        image = np.zeros((height, width, 3), dtype=np.uint8)
        image[:, :, 0] = 200  # channel 0 is blue in RGB888
        image[:, :, 2] = 30
        return image

    def stop(self):
        self.calls.append("stop")

    def close(self):
        self.calls.append("close")


@pytest.fixture
def fake_picamera2(monkeypatch):
    module = types.ModuleType("picamera2")
    module.Picamera2 = FakePicamera2
    monkeypatch.setitem(sys.modules, "picamera2", module)
    FakePicamera2.instances = []
    monkeypatch.setattr(FakePicamera2, "busy", False)
    monkeypatch.setattr(FakePicamera2, "cameras", [{"Model": "imx708"}])
    return FakePicamera2


def test_importing_hardware_never_imports_picamera2():
    import subprocess

    code = ("import sys, hardware, hardware.camera, hardware.frames, hardware.supervisor, hardware.picamera, "
            "webui.engine; assert 'picamera2' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_picamera2_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)
    with pytest.raises(CameraUnavailable) as caught:
        open_camera("pi")
    assert "sudo apt install python3-picamera2" in str(caught.value)
    assert "--system-site-packages" in str(caught.value)
    assert str(caught.value) == PICAMERA2_MISSING


def test_picamera2_broken_by_a_numpy_mismatch_says_how_to_fix_it(monkeypatch):
    import hardware.picamera as picamera_module

    def import_module(name):
        raise ValueError("numpy.dtype size changed, may indicate binary incompatibility. Expected 96 from C header")

    monkeypatch.setattr(picamera_module, "importlib", types.SimpleNamespace(import_module=import_module))
    with pytest.raises(CameraUnavailable) as caught:
        open_camera("pi")
    assert "numpy.dtype size changed" in str(caught.value)
    assert "pi-bookworm-constraints.txt" in str(caught.value)


def test_video_configuration_binned_mode_flicker_and_locked_exposure(fake_picamera2):
    camera = open_camera("pi", width=1280, height=960, ae_settle_seconds=0, flicker_hz=50)
    picam = fake_picamera2.instances[-1]
    request = picam.configuration_requests[-1]
    assert request["main"] == {"size": (1280, 960), "format": "RGB888"}
    assert request["sensor"] == {"output_size": (2304, 1296), "bit_depth": 10}  # 2x2 binned imx708
    assert request["controls"] == {"AeFlickerMode": 1, "AeFlickerPeriod": 10_000}
    assert picam.calls[:3] == ["start", "autofocus_cycle", "capture_metadata"]
    # 23 ms metered -> 20 ms (two 10 ms flicker periods), gain raised to keep the brightness
    assert picam.controls == [{"AeEnable": False, "AwbEnable": False, "ExposureTime": 20_000,
                               "AnalogueGain": 2.3, "ColourGains": (1.8, 1.5)}]
    frame = camera.read(timeout=2)
    assert frame.image.shape == (960, 1280, 3) and frame.image.dtype == np.uint8
    assert tuple(frame.image[0, 0]) == (200, 0, 30)  # passed through: RGB888 is already B,G,R
    camera.close()
    assert picam.calls[-2:] == ["stop", "close"]


def test_swap_red_blue_reverses_the_channels(fake_picamera2):
    camera = open_camera("pi", width=640, height=480, ae_settle_seconds=0, swap_red_blue=True)
    assert tuple(camera.read(timeout=2).image[0, 0]) == (30, 0, 200)
    camera.close()


def test_calibrated_values_are_applied_without_metering(fake_picamera2):
    camera = open_camera("pi", width=640, height=480, exposure_time_us=30_000, analogue_gain=1.5,
                         colour_gains=(2.0, 1.25), lens_position=3.0, flicker_hz=60)
    picam = fake_picamera2.instances[-1]
    assert "capture_metadata" not in picam.calls and "autofocus_cycle" not in picam.calls
    assert picam.configuration_requests[-1]["controls"] == {
        "AeFlickerMode": 1, "AeFlickerPeriod": 8_333, "AfMode": 0, "LensPosition": 3.0}
    assert picam.controls[-1]["ExposureTime"] == 33_332 and picam.controls[-1]["ColourGains"] == (2.0, 1.25)
    camera.close()


def test_camera_without_autofocus_or_flicker_control(fake_picamera2, monkeypatch):
    monkeypatch.setattr(fake_picamera2, "controls_available", {})
    camera = open_camera("pi", width=640, height=480, ae_settle_seconds=0, lens_position=2.0)
    picam = fake_picamera2.instances[-1]
    assert picam.configuration_requests[-1]["controls"] == {}
    assert "autofocus_cycle" not in picam.calls
    assert picam.controls[-1]["ExposureTime"] % 10_000 == 0  # flicker handled by the locked exposure alone
    camera.close()


def test_no_camera_connected_or_busy_is_unavailable(fake_picamera2, monkeypatch):
    monkeypatch.setattr(fake_picamera2, "cameras", [])
    with pytest.raises(CameraUnavailable, match="no Raspberry Pi camera detected"):
        open_camera("pi")
    monkeypatch.setattr(fake_picamera2, "cameras", [{"Model": "ov5647"}])
    monkeypatch.setattr(fake_picamera2, "busy", True)
    with pytest.raises(CameraUnavailable, match="another program"):
        open_camera("pi")


def test_a_start_up_fault_closes_the_camera_and_is_unavailable(fake_picamera2, monkeypatch):
    def refuse(self, configuration):
        raise RuntimeError("Failed to configure camera")

    monkeypatch.setattr(fake_picamera2, "configure", refuse)
    with pytest.raises(CameraUnavailable, match="cannot start the Pi camera: RuntimeError: Failed to configure"):
        open_camera("pi")
    assert fake_picamera2.instances[-1].calls == ["close"]


def test_choose_sensor_mode_takes_the_smallest_covering_mode():
    assert choose_sensor_mode(IMX708_MODES, 1280, 720)["size"] == (1536, 864)
    assert choose_sensor_mode(IMX708_MODES, 1280, 960)["size"] == (2304, 1296)
    assert choose_sensor_mode(IMX708_MODES, 5000, 3000) is None


def test_flicker_periods():
    assert flicker_period_us(50) == 10_000 and flicker_period_us(60) == 8_333 and flicker_period_us(0) is None


@settings(deadline=None)  # pure arithmetic; only a loaded machine could make it slow
@given(st.integers(100, 1_000_000), st.floats(1.0, 16.0), st.sampled_from([50, 60]))
def test_flicker_safe_exposure_is_whole_periods_and_keeps_brightness_when_it_can(exposure, gain, hz):
    rounded, new_gain = flicker_safe_exposure(exposure, gain, hz)
    assert rounded % flicker_period_us(hz) == 0 and rounded > 0
    assert new_gain >= 1.0
    if gain * exposure / rounded >= 1.0:
        assert rounded * new_gain == pytest.approx(exposure * gain)


def test_flicker_off_leaves_exposure_alone():
    assert flicker_safe_exposure(12_345, 1.7, 0) == (12_345, 1.7)
