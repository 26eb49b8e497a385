"""The Flask application factory: the table service, its API, the tablet pages and the guards."""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import logging
from collections.abc import Callable, Mapping
from typing import Any

from flask import Flask
from werkzeug.exceptions import HTTPException

from hardware.config import Settings
from scorer.game import GameError
from scorer.store import GameStore

from . import security
from .api import BadRequest, api, error_response
from .service import TableError, TableService, InvalidFieldError

log = logging.getLogger(__name__)

# Rule refusals that are about the game's state rather than the request's shape.
CONFLICT_CODES = {"roll_limit", "no_roll", "category_used", "game_over", "nothing_to_undo"}

_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}


def create_app(settings: Settings | Mapping[str, Any] | None = None,
               camera: Callable[[], Any] | None = None, *, advisor: Any = None,
               start_loop: bool = True, **loop_options: Any) -> Flask:
    """The table's app. `settings` is a hardware.config.Settings or a mapping of its fields.
    `camera()` opens the camera (it is called again to reopen one that failed); with it the table
    loop runs on a background thread, started now unless `start_loop` is False (then
    app.extensions["yacht_table_loop"].start()). `loop_options` go to webui.table.TableLoop."""
    settings = _as_settings(settings)
    app = Flask(__name__)
    app.debug = False  # even with FLASK_DEBUG set: a table on the home Wi-Fi never runs in debug mode
    store = GameStore.in_data_dir(settings.data_dir)
    service = TableService(store, camera_source="off" if camera is None else settings.camera,
                           advisor=advisor)
    app.extensions["yacht_table"] = service
    app.extensions["yacht_table_settings"] = settings

    security.install(app, host=settings.host, allowed_hosts=settings.allowed_hosts, pin=settings.pin,
                     error_response=error_response)
    _install_error_handlers(app)
    app.register_blueprint(api)
    if importlib.util.find_spec("webui.pages") is not None:
        from .pages import pages

        app.register_blueprint(pages)

    if camera is not None:
        from .table import TableLoop

        if settings.tray_region is not None and loop_options.get("read_dice") is None:
            from vision import read_dice

            # Dice are looked for on the calibrated tray only: outside it lie no dice to score.
            loop_options = {**loop_options, "read_dice": functools.partial(read_dice, tray=settings.tray_region)}
        loop = TableLoop(camera, service, source=settings.camera, settle_seconds=settings.settle_seconds,
                         **loop_options)
        app.extensions["yacht_table_loop"] = loop
        app.extensions["yacht_table_preview"] = loop.preview
        app.extensions["yacht_table_still"] = loop.still_jpeg
        if start_loop:
            loop.start()
    return app


def attach_panel(app: Flask, panel: Any) -> None:
    """The table's GPIO panel (hardware.gpio.TablePanel): its button asks the loop to read now, its
    light is on while a game is under way so every throw is lit alike."""
    loop = app.extensions.get("yacht_table_loop")
    if loop is not None:
        panel.on_read_request(loop.read_now)
    app.extensions["yacht_table"].add_game_listener(panel.set_light)


def end_streams(app: Flask) -> None:
    """Stop the loop and end every open stream (live updates, camera preview): they end only when
    told, so a server waiting for its threads to finish must call this first. Calling it again does
    nothing more."""
    loop = app.extensions.get("yacht_table_loop")
    if loop is not None:
        loop.stop()
    app.extensions["yacht_table"].broadcaster.close()


def shutdown(app: Flask) -> None:
    """End every stream and close the database."""
    end_streams(app)
    service: TableService = app.extensions["yacht_table"]
    service.store.close()


def _as_settings(settings: Settings | Mapping[str, Any] | None) -> Settings:
    if settings is None:
        return Settings()
    if isinstance(settings, Settings):
        return settings
    return dataclasses.replace(Settings(), **dict(settings))


def _install_error_handlers(app: Flask) -> None:
    @app.errorhandler(BadRequest)
    def bad_request(error: BadRequest):
        return error_response(400, error.code, str(error), error.field)

    @app.errorhandler(InvalidFieldError)
    def invalid_field(error: InvalidFieldError):
        return error_response(400, "invalid_input", str(error), error.field)

    @app.errorhandler(TableError)
    def refused(error: TableError):
        return error_response(error.status, error.code, str(error), error.field)

    @app.errorhandler(GameError)
    def rule_refusal(error: GameError):
        if error.code in CONFLICT_CODES:
            return error_response(409, error.code, str(error))
        return error_response(400, error.code, str(error), getattr(error, "field", None))

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        status = error.code or 500
        code = _HTTP_CODES.get(status, "http_error")
        return error_response(status, code, error.description or error.name)

    @app.errorhandler(Exception)
    def unexpected(error: Exception):
        log.exception("unexpected error answering a request")
        return error_response(500, "internal_error",
                              "the table hit an unexpected error; it has been logged")
