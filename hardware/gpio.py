"""The optional table buttons and light on the Pi's GPIO header (gpiozero, extra `pi`).

A push button means "read the dice now" (for when the settle detector waits on a die that will not
stop rocking); a light, such as an LED ring around the camera, is on while a game is active so the
dice are lit the same way for every throw.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

GPIOZERO_MISSING = (
    "GPIO pins are configured but gpiozero is not importable. Install the Pi extra "
    "(`.venv/bin/pip install -e '.[pi]'`) or `sudo apt install python3-gpiozero` in a venv made with "
    "--system-site-packages; or remove button_pin and light_pin from the configuration"
)


class TablePanel:
    """The button and light wired to the table; either may be absent (pin None).

    `pin_factory` is a gpiozero pin factory; None uses gpiozero's default (the Pi's real pins), tests
    pass gpiozero.pins.mock.MockFactory().
    """

    def __init__(self, button_pin: int | None = None, light_pin: int | None = None, *,
                 pin_factory=None, bounce_seconds: float = 0.05):
        if button_pin is not None and button_pin == light_pin:
            raise ValueError(f"button and light cannot share GPIO {button_pin}")
        try:
            gpiozero = importlib.import_module("gpiozero")
        except ImportError:
            raise RuntimeError(GPIOZERO_MISSING) from None
        self._listeners: list[Callable[[], None]] = []
        self.button = None
        self.light = None
        try:
            if button_pin is not None:
                # wired between the pin and ground: the internal pull-up holds it high until pressed
                self.button = gpiozero.Button(button_pin, pull_up=True, bounce_time=bounce_seconds,
                                              pin_factory=pin_factory)
                self.button.when_pressed = self._pressed
            if light_pin is not None:
                self.light = gpiozero.LED(light_pin, pin_factory=pin_factory)
        except Exception as error:  # gpiozero raises many kinds (BadPinFactory, PinInvalidPin, ...)
            self.close()
            raise RuntimeError(f"cannot use GPIO pins (button {button_pin}, light {light_pin}): "
                               f"{type(error).__name__}: {error}") from None

    def on_read_request(self, listener: Callable[[], None]) -> None:
        """`listener()` runs on gpiozero's thread each time the button is pressed."""
        self._listeners.append(listener)

    def set_light(self, on: bool) -> None:
        if self.light is not None:
            self.light.value = bool(on)

    def _pressed(self) -> None:
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:
                log.exception("button listener failed")

    def close(self) -> None:
        for device in (self.button, self.light):
            if device is not None:
                device.close()
        self.button = self.light = None

    def __enter__(self) -> TablePanel:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def open_table_panel(button_pin: int | None, light_pin: int | None, pin_factory=None) -> TablePanel | None:
    """The panel for the configured pins, or None when no pin is configured (gpiozero not needed then)."""
    if button_pin is None and light_pin is None:
        return None
    return TablePanel(button_pin, light_pin, pin_factory=pin_factory)
