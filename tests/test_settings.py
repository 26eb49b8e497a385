"""Settings: defaults, TOML file, YACHT_TABLE_* environment, overrides; bad values name their key."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webui.engine.settings import Settings, SettingsError, default_config_path, load_settings, update_config_file


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_file_or_environment(tmp_path):
    settings = load_settings(env={"XDG_CONFIG_HOME": str(tmp_path), "YACHT_TABLE_DATA_DIR": str(tmp_path / "d")})
    assert settings.host == "127.0.0.1" and settings.port == 8000
    assert settings.camera == "auto" and settings.pin is None
    assert settings.settle_seconds == 0.3 and settings.swap_red_blue is False
    assert settings.data_dir == tmp_path / "d"


def test_data_dir_defaults_to_the_xdg_data_dir(monkeypatch, tmp_path):
    environment = {"XDG_CONFIG_HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    assert load_settings(env=environment).data_dir == tmp_path / "xdg" / "yacht-table"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert Settings().data_dir == tmp_path / "xdg" / "yacht-table"


def test_file_then_environment_then_overrides(tmp_path):
    config = write(tmp_path / "table.toml", 'camera = "usb:1"\nport = 8080\nhost = "0.0.0.0"\n'
                                            'tray_region = [10, 20, 300, 200]\nswap_red_blue = true\n')
    env = {"YACHT_TABLE_PORT": "9000", "YACHT_TABLE_ALLOWED_HOSTS": "table.local, 192.168.1.5"}
    settings = load_settings(config, env=env, camera="replay:samples", host=None)
    assert settings.camera == "replay:samples"          # override beats the file
    assert settings.port == 9000                        # environment beats the file
    assert settings.host == "0.0.0.0"                   # a None override falls through
    assert settings.allowed_hosts == ("table.local", "192.168.1.5")
    assert settings.tray_region == (10, 20, 300, 200) and settings.swap_red_blue is True


def test_config_path_from_environment_and_xdg(tmp_path):
    assert default_config_path({"YACHT_TABLE_CONFIG": "/etc/yt.toml"}) == Path("/etc/yt.toml")
    assert default_config_path({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "yacht-table" / "config.toml"
    write(tmp_path / "here.toml", "port = 8123\n")
    assert load_settings(env={"YACHT_TABLE_CONFIG": str(tmp_path / "here.toml")}).port == 8123


def test_a_named_config_file_that_is_missing_is_an_error(tmp_path):
    with pytest.raises(SettingsError, match="does not exist"):
        load_settings(tmp_path / "missing.toml", env={})
    with pytest.raises(SettingsError, match="does not exist"):
        load_settings(env={"YACHT_TABLE_CONFIG": str(tmp_path / "missing.toml")})


@pytest.mark.parametrize("text, key", [
    ("port = 70000\n", "port"),
    ('port = "8000"\n', "port"),
    ('camera = "webcam"\n', "camera"),
    ("swap_red_blue = 1\n", "swap_red_blue"),
    ("tray_region = [1, 2, 3]\n", "tray_region"),
    ("flicker_hz = 55\n", "flicker_hz"),
    ("replay_fps = 0\n", "replay_fps"),
    ('pin = "12a4"\n', "pin"),
    ("prot = 8000\n", "prot"),
])
def test_bad_file_values_name_the_key_and_the_file(tmp_path, text, key):
    config = write(tmp_path / "bad.toml", text)
    with pytest.raises(SettingsError, match=key) as caught:
        load_settings(config, env={})
    assert str(config) in str(caught.value)


def test_bad_environment_values_name_the_variable(tmp_path):
    with pytest.raises(SettingsError, match="YACHT_TABLE_PORT"):
        load_settings(env={"XDG_CONFIG_HOME": str(tmp_path), "YACHT_TABLE_PORT": "eighty"})
    with pytest.raises(SettingsError, match="YACHT_TABLE_SWAP_RED_BLUE"):
        load_settings(env={"XDG_CONFIG_HOME": str(tmp_path), "YACHT_TABLE_SWAP_RED_BLUE": "maybe"})


def test_invalid_toml_is_reported_with_its_path(tmp_path):
    config = write(tmp_path / "broken.toml", "port = \n")
    with pytest.raises(SettingsError, match="not valid TOML"):
        load_settings(config, env={})


def test_environment_can_clear_an_optional_setting(tmp_path):
    config = write(tmp_path / "c.toml", "button_pin = 17\n")
    assert load_settings(config, env={"YACHT_TABLE_BUTTON_PIN": "none"}).button_pin is None


def test_button_and_light_need_different_pins(tmp_path):
    with pytest.raises(SettingsError, match="different pins"):
        load_settings(env={"XDG_CONFIG_HOME": str(tmp_path)}, button_pin=17, light_pin=17)


def test_update_keeps_other_keys_and_round_trips(tmp_path):
    config = write(tmp_path / "c.toml", 'camera = "pi"\nport = 8080\nlens_position = 2.5\n')
    update_config_file(config, {"tray_region": (5, 6, 700, 500), "exposure_time_us": 20000,
                                "colour_gains": (1.9, 1.4), "lens_position": None})
    settings = load_settings(config, env={})
    assert settings.camera == "pi" and settings.port == 8080 and settings.lens_position is None
    assert settings.tray_region == (5, 6, 700, 500) and settings.exposure_time_us == 20000
    assert settings.colour_gains == (1.9, 1.4)


def test_update_refuses_a_bad_value_and_leaves_the_file_alone(tmp_path):
    config = write(tmp_path / "c.toml", "port = 8080\n")
    with pytest.raises(SettingsError, match="port"):
        update_config_file(config, {"port": 0})
    assert config.read_text() == "port = 8080\n"


@settings(deadline=None, max_examples=50)  # file writes: slow on a loaded machine, never wrong
@given(text=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40))
def test_text_settings_survive_a_write_and_read(tmp_path_factory, text):
    config = tmp_path_factory.mktemp("cfg") / "c.toml"
    if not text.strip():
        return
    update_config_file(config, {"host": text})
    assert load_settings(config, env={}).host == text.strip()


def test_every_setting_can_come_from_the_file_and_the_environment():
    from dataclasses import fields

    from webui.engine import settings as config

    names = {f.name for f in fields(Settings)}
    assert set(config._CHECKERS) == names and set(config._ENV_KIND) == names
    assert config._OPTIONAL <= names
