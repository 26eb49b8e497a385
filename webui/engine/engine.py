"""One table, running, without any web server: built from its settings by `open_engine`, ended by
`close`. It opens the games journal, supervises the camera, settles and reads each throw, and keeps
the versioned state that the tablets watch (webui.app serves it over HTTP)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from hardware.camera import ThrowRequests
from hardware.camera import open_camera as open_camera_source
from hardware.frames import Camera
from scorer.store import GameStore

from .errors import AllHeldError, NotADemoError
from .events import Broadcaster
from .loop import TableLoop
from .session import GameSession
from .settings import Settings
from .table import Table
from .views import Advisor

log = logging.getLogger(__name__)


class Engine:
    """The table and, when it has a camera, the loop feeding it. `start()` starts the loop's threads
    (open_engine does unless told not to); `close()` stops them, ends every stream and closes the
    journal. Closing twice does nothing more."""

    def __init__(self, settings: Settings, table: Table, loop: TableLoop | None,
                 demo_throws: ThrowRequests | None = None):
        self.settings = settings
        self.table = table
        self.loop = loop
        self.demo_throws = demo_throws  # the demo camera's: it throws only when asked
        self._closed = False

    @property
    def preview(self) -> Broadcaster | None:
        """The camera preview's JPEG frames, or None for a table without a camera."""
        return None if self.loop is None else self.loop.preview

    def still_jpeg(self) -> bytes | None:
        """The last throw's picture, annotated; None before the first or without a camera."""
        return None if self.loop is None else self.loop.still_jpeg()

    def read_now(self) -> None:
        """Read the dice at the next frame whatever the settle detector says (the table's button)."""
        if self.loop is not None:
            self.loop.read_now()

    def throw(self) -> None:
        """The demo camera shows its next sample throw, of the dice not held (the tablet's Throw
        button); NotADemoError for any other camera: real dice are thrown by hand; AllHeldError
        when every die is held."""
        if self.demo_throws is None:
            raise NotADemoError("only the demo camera throws when asked; this table's dice are thrown by hand")
        dice = self.table.dice_to_throw()
        if dice == 0:
            raise AllHeldError("all five dice are held: let go of the dice to throw, or choose a row")
        self.demo_throws.request(dice)

    def attach_panel(self, panel: Any) -> None:
        """The table's GPIO panel (hardware.gpio.TablePanel): its button asks the loop to read now
        (the demo camera to throw), its light is on while a game is under way so every throw is lit
        alike."""
        panel.on_read_request(self.read_now if self.demo_throws is None else self._button_throw)
        self.table.add_game_listener(panel.set_light)

    def _button_throw(self) -> None:
        try:
            self.throw()
        except AllHeldError as refused:  # the tablets show the dice held; the button just does nothing
            log.info("the table's button: %s", refused)

    def start(self) -> Engine:
        if self.loop is not None:
            self.loop.start()
        return self

    def end_streams(self) -> None:
        """Stop the loop and end every open stream (live updates, camera preview): they end only
        when told, so a server waiting for its threads to finish must call this first."""
        if self.loop is not None:
            self.loop.stop()
        self.table.broadcaster.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.end_streams()
        self.table.session.close()


def open_engine(settings: Settings, *, advisor: Advisor | None = None,
                open_camera: Callable[[], Camera] | None = None, start: bool = True,
                **loop_options: Any) -> Engine:
    """The table described by `settings`. Its camera is `settings.camera` (none when "off"), opened
    by `open_camera()` when given (tests hand in a fake). `loop_options` go to TableLoop (read_dice,
    annotate, make_detector, preview_fps)."""
    session = GameSession(GameStore.in_data_dir(settings.data_dir))
    has_camera = open_camera is not None or settings.camera != "off"
    demo_throws = ThrowRequests() if settings.camera == "demo" else None
    table = Table(session, camera_source=settings.camera if has_camera else "off", advisor=advisor,
                  demo=demo_throws is not None)
    loop = None
    if has_camera:
        if open_camera is None:
            open_camera = functools.partial(open_camera_source, settings.camera, throws=demo_throws,
                                            **settings.camera_options())
        if settings.tray_region is not None and loop_options.get("read_dice") is None:
            from vision import read_dice

            # Dice are looked for on the calibrated tray only: outside it lie no dice to score.
            loop_options["read_dice"] = functools.partial(read_dice, tray=settings.tray_region)
        loop = TableLoop(open_camera, table, source=settings.camera, settle_seconds=settings.settle_seconds,
                         **loop_options)
    engine = Engine(settings, table, loop, demo_throws)
    return engine.start() if start else engine
