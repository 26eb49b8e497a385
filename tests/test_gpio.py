"""The table button and light, on gpiozero's mock pins."""

from __future__ import annotations

import sys
import time

import pytest

pytest.importorskip("gpiozero", reason="gpiozero is in the test extra: pip install -e '.[test]'")
from gpiozero.pins.mock import MockFactory  # noqa: E402

from hardware.gpio import GPIOZERO_MISSING, TablePanel, open_table_panel  # noqa: E402


@pytest.fixture
def pins():
    return MockFactory()


def press(pins, number):
    pins.pin(number).drive_low()
    time.sleep(0.02)
    pins.pin(number).drive_high()
    time.sleep(0.08)  # past the bounce time


def test_button_press_asks_for_a_reading(pins):
    requests = []
    with TablePanel(button_pin=17, pin_factory=pins) as panel:
        panel.on_read_request(lambda: requests.append("read"))
        press(pins, 17)
        press(pins, 17)
    assert requests == ["read", "read"]


def test_a_failing_listener_does_not_stop_the_others(pins):
    requests = []
    with TablePanel(button_pin=17, pin_factory=pins) as panel:
        panel.on_read_request(lambda: 1 / 0)
        panel.on_read_request(lambda: requests.append("read"))
        press(pins, 17)
    assert requests == ["read"]


def test_light_follows_the_game(pins):
    with TablePanel(light_pin=27, pin_factory=pins) as panel:
        assert pins.pin(27).state is False
        panel.set_light(True)
        assert pins.pin(27).state is True
        panel.set_light(False)
        assert pins.pin(27).state is False


def test_without_pins_there_is_no_panel():
    assert open_table_panel(None, None) is None


def test_panel_without_light_ignores_light_changes(pins):
    panel = open_table_panel(17, None, pin_factory=pins)
    panel.set_light(True)  # no light to switch: nothing happens, nothing fails
    assert panel.light is None
    panel.close()


def test_shared_pin_is_refused(pins):
    with pytest.raises(ValueError, match="share GPIO 17"):
        TablePanel(17, 17, pin_factory=pins)


def test_pin_in_use_gives_a_clear_error_and_releases_the_button(pins):
    holder = TablePanel(light_pin=27, pin_factory=pins)
    with pytest.raises(RuntimeError, match="cannot use GPIO pins"):
        TablePanel(button_pin=17, light_pin=27, pin_factory=pins)
    holder.close()
    TablePanel(button_pin=17, light_pin=27, pin_factory=pins).close()  # 17 was released


def test_missing_gpiozero_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "gpiozero", None)
    with pytest.raises(RuntimeError) as caught:
        TablePanel(button_pin=17)
    assert str(caught.value) == GPIOZERO_MISSING and "[pi]" in str(caught.value)
