"""The table's settings: defaults, then a TOML file, then YACHT_TABLE_* environment variables, then
explicit overrides (command-line flags). Every value is checked; a bad one names its key and source.

The application owns its settings and where its files live; the packages below it (scorer, hardware,
vision) are handed paths and values, and read no environment."""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from hardware.camera import parse_source
from scorer.files import write_atomically

APP_NAME = "yacht-table"
CONFIG_ENV = "YACHT_TABLE_CONFIG"
ENV_PREFIX = "YACHT_TABLE_"


def xdg_dir(kind: str, env: Mapping[str, str] = os.environ) -> Path:
    """The table's folder of one XDG kind: `config` ($XDG_CONFIG_HOME, else ~/.config) or `data`
    ($XDG_DATA_HOME, else ~/.local/share), each followed by yacht-table."""
    variable, fallback = {"config": ("XDG_CONFIG_HOME", Path(".config")),
                          "data": ("XDG_DATA_HOME", Path(".local") / "share")}[kind]
    base = env.get(variable)
    return (Path(base).expanduser() if base else Path.home() / fallback) / APP_NAME


@dataclass(frozen=True)
class Settings:
    data_dir: Path = field(default_factory=lambda: xdg_dir("data"))
    camera: str = "auto"
    host: str = "127.0.0.1"
    port: int = 8000
    allowed_hosts: tuple[str, ...] = ()
    pin: str | None = None
    settle_seconds: float = 0.3
    frame_width: int = 1280
    frame_height: int = 960
    replay_fps: float = 4.0
    replay_hold: int = 8
    swap_red_blue: bool = False
    exposure_time_us: int | None = None
    analogue_gain: float | None = None
    colour_gains: tuple[float, float] | None = None
    flicker_hz: int = 50
    lens_position: float | None = None
    tray_region: tuple[int, int, int, int] | None = None
    button_pin: int | None = None
    light_pin: int | None = None

    def camera_options(self) -> dict[str, Any]:
        """Keyword options for hardware.camera.open_camera."""
        return {
            "width": self.frame_width, "height": self.frame_height,
            "fps": self.replay_fps, "hold": self.replay_hold,
            "swap_red_blue": self.swap_red_blue, "exposure_time_us": self.exposure_time_us,
            "analogue_gain": self.analogue_gain, "colour_gains": self.colour_gains,
            "flicker_hz": self.flicker_hz, "lens_position": self.lens_position,
        }


class SettingsError(ValueError):
    """A setting with a bad value or an unknown name."""


def default_config_path(env: Mapping[str, str] = os.environ) -> Path:
    """$YACHT_TABLE_CONFIG, else $XDG_CONFIG_HOME/yacht-table/config.toml, else ~/.config/yacht-table/config.toml."""
    explicit = env.get(CONFIG_ENV)
    return Path(explicit).expanduser() if explicit else xdg_dir("config", env) / "config.toml"


def load_settings(path: str | Path | None = None, env: Mapping[str, str] = os.environ,
                  **overrides: Any) -> Settings:
    """Settings from defaults, the TOML file, the environment, then `overrides` (None values are
    skipped so unset command-line flags fall through). A missing file is fine unless named explicitly."""
    explicit_file = path is not None or bool(env.get(CONFIG_ENV))
    config_path = Path(path).expanduser() if path is not None else default_config_path(env)
    values: dict[str, Any] = {"data_dir": xdg_dir("data", env)}
    if config_path.is_file():
        values.update(_check_all(read_config_file(config_path), f"{config_path}"))
    elif explicit_file:
        raise SettingsError(f"config file {config_path} does not exist")
    for name in _FIELD_NAMES:
        text = env.get(ENV_PREFIX + name.upper())
        if text is not None:
            values[name] = _check(name, _from_text(name, text, ENV_PREFIX + name.upper()), ENV_PREFIX + name.upper())
    for name, value in overrides.items():
        if value is not None:
            values[name] = _check(name, value, "override")
    settings = replace(Settings(), **values)
    _check_together(settings)
    return settings


def read_config_file(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"config file {path} is not valid TOML: {error}") from None
    except OSError as error:
        raise SettingsError(f"cannot read config file {path}: {error.strerror}") from None


def update_config_file(path: Path, changes: Mapping[str, Any]) -> None:
    """Write `changes` into the TOML file at `path`, keeping its other keys; None removes a key.
    Comments are not kept: the file is rewritten from its values."""
    current = read_config_file(path) if path.is_file() else {}
    for name, value in changes.items():
        _check(name, value, "update")
        if value is None:
            current.pop(name, None)
        else:
            current[name] = value
    _check_all(current, str(path))
    lines = [f"{name} = {_toml_value(value)}" for name, value in current.items()]
    write_atomically(path, ("\n".join(lines) + "\n").encode("utf-8"))


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (str, Path)):
        return '"' + "".join(_toml_char(char) for char in str(value)) + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    raise SettingsError(f"cannot write {value!r} to a config file")


def _toml_char(char: str) -> str:
    if char in '"\\':
        return "\\" + char
    if ord(char) < 0x20 or ord(char) == 0x7F:  # TOML strings forbid raw control characters
        return f"\\u{ord(char):04x}"
    return char


_FIELD_NAMES = tuple(f.name for f in fields(Settings))


def _check_all(values: Mapping[str, Any], origin: str) -> dict[str, Any]:
    checked = {}
    for name, value in values.items():
        checked[name] = _check(name, value, origin)
    return checked


def _check(name: str, value: Any, origin: str) -> Any:
    checker = _CHECKERS.get(name)
    if checker is None:
        raise SettingsError(f"{origin}: unknown setting {name!r}; known settings: {', '.join(_FIELD_NAMES)}")
    if value is None and name in _OPTIONAL:
        return None
    try:
        return checker(value)
    except (TypeError, ValueError) as error:
        raise SettingsError(f"{origin}: setting {name!r}: {error}") from None


def _check_together(settings: Settings) -> None:
    pins = [pin for pin in (settings.button_pin, settings.light_pin) if pin is not None]
    if len(pins) != len(set(pins)):
        raise SettingsError(f"button_pin and light_pin are both GPIO {pins[0]}; they need different pins")


# converters: each takes a TOML/override value and returns the checked value or raises ValueError

def _integer(low: int, high: int | None = None) -> Callable[[Any], int]:
    def convert(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected a whole number, got {value!r}")
        if value < low or (high is not None and value > high):
            raise ValueError(f"must be from {low} to {high}, got {value}" if high is not None
                             else f"must be at least {low}, got {value}")
        return value
    return convert


def _number(low: float, *, above: bool = False) -> Callable[[Any], float]:
    def convert(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"expected a number, got {value!r}")
        if value < low or (above and value == low):
            raise ValueError(f"must be {'above' if above else 'at least'} {low}, got {value}")
        return float(value)
    return convert


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected non-empty text, got {value!r}")
    return value.strip()


def _camera(value: Any) -> str:
    text = _text(value)
    parse_source(text)
    return text


def _path(value: Any) -> Path:
    return Path(_text(str(value) if isinstance(value, Path) else value)).expanduser()


def _pin_code(value: Any) -> str:
    text = _text(str(value) if isinstance(value, int) and not isinstance(value, bool) else value)
    if not re.fullmatch(r"\d{4,12}", text):
        raise ValueError("must be 4 to 12 digits")
    return text


def _hosts(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        raise ValueError(f"expected a list of host names, got the text {value!r}")
    return tuple(_text(item) for item in value)


def _number_tuple(count: int, item: Callable[[Any], Any]) -> Callable[[Any], tuple]:
    def convert(value: Any) -> tuple:
        if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != count:
            raise ValueError(f"expected a list of {count} numbers, got {value!r}")
        return tuple(item(part) for part in value)
    return convert


_CHECKERS: dict[str, Callable[[Any], Any]] = {
    "data_dir": _path,
    "camera": _camera,
    "host": _text,
    "port": _integer(1, 65535),
    "allowed_hosts": _hosts,
    "pin": _pin_code,
    "settle_seconds": _number(0.0),
    "frame_width": _integer(16, 8192),
    "frame_height": _integer(16, 8192),
    "replay_fps": _number(0.0, above=True),
    "replay_hold": _integer(1),
    "swap_red_blue": _boolean,
    "exposure_time_us": _integer(1, 10_000_000),
    "analogue_gain": _number(1.0),
    "colour_gains": _number_tuple(2, _number(0.0, above=True)),
    "flicker_hz": lambda value: _choice(value, (0, 50, 60)),
    "lens_position": _number(0.0),
    "tray_region": _number_tuple(4, _integer(0)),
    "button_pin": _integer(0, 27),
    "light_pin": _integer(0, 27),
}
_OPTIONAL = {"pin", "exposure_time_us", "analogue_gain", "colour_gains", "lens_position", "tray_region",
             "button_pin", "light_pin"}


def _choice(value: Any, allowed: tuple[int, ...]) -> int:
    if isinstance(value, bool) or value not in allowed:
        raise ValueError(f"must be one of {', '.join(map(str, allowed))}, got {value!r}")
    return int(value)


_NONE_WORDS = {"", "none", "off"}


def _from_text(name: str, text: str, origin: str) -> Any:
    """An environment variable's text as the value type its setting expects."""
    kind = _ENV_KIND[name]
    stripped = text.strip()
    if name in _OPTIONAL and stripped.lower() in _NONE_WORDS:
        return None
    try:
        if kind == "bool":
            lowered = stripped.lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValueError(f"expected true or false, got {text!r}")
        if kind == "int":
            return int(stripped)
        if kind == "float":
            return float(stripped)
        if kind == "list":
            return [part.strip() for part in stripped.split(",") if part.strip()]
        if kind == "ints":
            return [int(part) for part in stripped.replace(" ", ",").split(",") if part]
        if kind == "floats":
            return [float(part) for part in stripped.replace(" ", ",").split(",") if part]
        return stripped
    except ValueError as error:
        raise SettingsError(f"{origin}: {error}") from None


_ENV_KIND = {
    "data_dir": "text", "camera": "text", "host": "text", "port": "int", "allowed_hosts": "list",
    "pin": "text", "settle_seconds": "float", "frame_width": "int", "frame_height": "int",
    "replay_fps": "float", "replay_hold": "int", "swap_red_blue": "bool", "exposure_time_us": "int",
    "analogue_gain": "float", "colour_gains": "floats", "flicker_hz": "int", "lens_position": "float",
    "tray_region": "ints", "button_pin": "int", "light_pin": "int",
}
