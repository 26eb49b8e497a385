"""Calibration: finding the empty tray, judging the light, and the `calibrate` / `install-service` commands."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hardware.calibrate import (
    CalibrationError,
    assess_lighting,
    calibrate,
    find_tray_region,
    parse_region,
)
from hardware.fake_camera import FakeCamera
from webui.cli import main
from webui.engine.settings import load_settings
from webui.hardware_cli import render_unit

WOOD = (40, 80, 130)     # BGR: a brown table
FELT = (60, 140, 50)     # a green felt tray


def table_with_tray(region, *, size=(480, 640), tray=FELT, table=WOOD, noise=6, seed=0):
    height, width = size
    rng = np.random.default_rng(seed)
    image = np.empty((height, width, 3), dtype=np.int16)
    image[:] = table
    x, y, w, h = region
    image[y:y + h, x:x + w] = tray
    image += rng.integers(-noise, noise + 1, image.shape, dtype=np.int16)
    return np.clip(image, 0, 255).astype(np.uint8)


def close_to(found, expected, tolerance=4):
    return all(abs(a - b) <= tolerance for a, b in zip(found, expected))


def test_finds_a_green_tray_on_a_wooden_table():
    assert close_to(find_tray_region(table_with_tray((100, 60, 420, 330))), (100, 60, 420, 330))


# A strip of table at the picture's edge is either absent or at least EDGE_STRIP px wide: the blur and
# the mask's 7 px opening and closing take a narrower one for tray (a tray 2 px from the top and 3 px
# from the bottom comes out 5 px too tall; one within 3 px of every side "reaches every side").
EDGE_STRIP = 8


def margin(low: int, high: int) -> st.SearchStrategy[int]:
    return st.one_of(st.just(low), st.integers(low + EDGE_STRIP, high))


def far_side(low: int, high: int) -> st.SearchStrategy[int]:
    return st.one_of(st.just(high), st.integers(low, high - EDGE_STRIP))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# The smallest tray drawn (100x100, 8% of the picture) stays clear of MIN_TRAY_FRACTION (5%), which
# noise at its edge could otherwise cross.
@given(left=margin(0, 150), top=margin(0, 100), right=far_side(250, 400), bottom=far_side(200, 300),
       tray=st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255)), seed=st.integers(0, 99))
def test_finds_any_tray_that_contrasts_with_the_table(left, top, right, bottom, tray, seed):
    # a 400x300 picture; the tray covers its middle, as under a camera looking straight down
    table = (30, 30, 30)
    table_lab = cv2.cvtColor(np.uint8([[table]]), cv2.COLOR_BGR2LAB).astype(float)
    tray_lab = cv2.cvtColor(np.uint8([[tray]]), cv2.COLOR_BGR2LAB).astype(float)
    assume(np.linalg.norm(table_lab - tray_lab) >= 40)
    assume((left, top, right, bottom) != (0, 0, 400, 300))
    region = (left, top, right - left, bottom - top)
    image = table_with_tray(region, size=(300, 400), tray=tray, table=table, noise=4, seed=seed)
    assert close_to(find_tray_region(image), region)


def test_a_die_left_at_the_centre_does_not_hide_the_tray():
    image = table_with_tray((100, 60, 420, 330))
    image[225:255, 305:335] = 240  # a white die right under the lens
    assert close_to(find_tray_region(image), (100, 60, 420, 330))


def test_a_tray_the_colour_of_the_table_is_refused_with_advice():
    image = table_with_tray((100, 60, 420, 330), tray=(44, 82, 128))
    with pytest.raises(CalibrationError, match="--region"):
        find_tray_region(image)


def test_a_busy_centre_is_refused():
    rng = np.random.default_rng(1)
    image = rng.integers(0, 256, (240, 320, 3), dtype=np.uint8)
    with pytest.raises(CalibrationError, match="--region"):
        find_tray_region(image)


def test_good_light_gives_no_warnings_and_bad_light_explains_itself():
    region = (100, 60, 420, 330)
    assert assess_lighting(table_with_tray(region), region) == []
    dark = table_with_tray(region, tray=(20, 30, 20), table=(5, 5, 5))
    assert any("dark" in w for w in assess_lighting(dark, region))
    glare = table_with_tray(region, noise=0)
    glare[100:250, 150:350] = 255
    assert any("glare" in w for w in assess_lighting(glare, region))
    uneven = table_with_tray(region, noise=0)
    uneven[:, :320] = (uneven[:, :320] * 0.5).astype(np.uint8)
    assert any("uneven" in w for w in assess_lighting(uneven, region))


def test_calibrate_averages_frames_and_keeps_the_locked_exposure():
    frames = [table_with_tray((100, 60, 420, 330), noise=20, seed=s) for s in range(5)]
    camera = FakeCamera(frames).open()
    camera.locked_controls = {"AeEnable": False, "AwbEnable": False, "ExposureTime": 20000,
                              "AnalogueGain": 2.3, "ColourGains": (1.8, 1.5)}
    result = calibrate(camera, frames=5)
    assert close_to(result.region, (100, 60, 420, 330))
    assert result.config_changes() == {"tray_region": list(result.region), "exposure_time_us": 20000,
                                       "analogue_gain": 2.3, "colour_gains": [1.8, 1.5]}


def test_a_given_region_must_fit_the_picture():
    camera = FakeCamera([table_with_tray((100, 60, 420, 330))]).open()
    assert calibrate(camera, region=(0, 0, 640, 480), frames=1).region == (0, 0, 640, 480)
    with pytest.raises(CalibrationError, match="does not fit"):
        calibrate(camera, region=(600, 0, 100, 100), frames=1)


@pytest.mark.parametrize("text", ["1,2,3", "a,b,c,d", "1,2,0,4", "-1,2,3,4"])
def test_parse_region_refuses_bad_text(text):
    with pytest.raises(ValueError, match="x,y,width,height"):
        parse_region(text)


@pytest.fixture
def tray_folder(tmp_path):
    folder = tmp_path / "tray"
    folder.mkdir()
    cv2.imwrite(str(folder / "empty.png"), table_with_tray((100, 60, 420, 330)))
    return folder


def test_calibrate_command_with_a_replay_saves_the_region(tmp_path, tray_folder, capsys, monkeypatch):
    monkeypatch.setenv("YACHT_TABLE_DATA_DIR", str(tmp_path / "data"))
    config = tmp_path / "config.toml"
    config.write_text('port = 8080\n')
    status = main(["calibrate", "--camera", f"replay:{tray_folder}", "--config", str(config), "--frames", "2"])
    out = capsys.readouterr().out
    assert status == 0, out
    settings = load_settings(config, env={})
    assert settings.port == 8080 and close_to(settings.tray_region, (100, 60, 420, 330))
    assert "only the tray region was saved" in out
    assert (tmp_path / "data" / "calibration" / "empty-tray.png").is_file()


def test_calibrate_command_errors_are_one_line_and_leave_the_config_alone(tmp_path, tray_folder, capsys):
    config = tmp_path / "config.toml"
    config.write_text('port = 8080\n')
    status = main(["calibrate", "--camera", f"replay:{tray_folder}", "--config", str(config),
                   "--region", "600,0,100,100"])
    assert status == 2 and "does not fit" in capsys.readouterr().err
    status = main(["calibrate", "--camera", f"replay:{tmp_path / 'nowhere'}", "--config", str(config)])
    assert status == 2 and "does not exist" in capsys.readouterr().err
    assert config.read_text() == "port = 8080\n"


def test_service_unit_runs_the_table_as_the_user(tmp_path):
    unit = render_unit("pi", tmp_path / "bin" / "yacht-table", ["video", "gpio"])
    assert "User=pi\n" in unit and "SupplementaryGroups=video gpio\n" in unit
    assert f"ExecStart={tmp_path / 'bin' / 'yacht-table'} serve\n" in unit
    assert "WantedBy=multi-user.target" in unit and "{" not in unit


def test_install_service_writes_the_unit_without_starting_it(tmp_path, capsys):
    import getpass

    status = main(["install-service", "--unit-dir", str(tmp_path), "--no-start", "--user", getpass.getuser()])
    assert status == 0
    unit = (tmp_path / "yacht-table.service").read_text()
    assert "serve" in unit and f"User={getpass.getuser()}" in unit
    assert main(["install-service", "--user", "no-such-user-here", "--print"]) == 2
    assert "no user account" in capsys.readouterr().err


def test_install_service_reloads_systemd_and_enables_the_unit(tmp_path, monkeypatch, capsys):
    import getpass

    calls = tmp_path / "calls.txt"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    systemctl = bin_dir / "systemctl"
    systemctl.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    systemctl.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    assert main(["install-service", "--unit-dir", str(tmp_path / "units"), "--user", getpass.getuser()]) == 0
    assert calls.read_text().splitlines() == ["daemon-reload", "enable --now yacht-table.service"]
    assert "journalctl -u yacht-table" in capsys.readouterr().out
    systemctl.write_text('#!/bin/sh\necho "Failed to enable unit: Access denied" >&2\nexit 1\n')
    assert main(["install-service", "--unit-dir", str(tmp_path / "units"), "--user", getpass.getuser()]) == 2
    assert "Access denied" in capsys.readouterr().err
