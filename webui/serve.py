"""`yacht-table serve`: the table in one process (it owns the camera) behind its own HTTP server
(webui.server: an event loop for connections and live streams, worker threads for the app)."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sqlite3
import sys
from pathlib import Path

log = logging.getLogger(__name__)


def add_commands(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "serve",
        help="run the table: camera, game and the tablet page",
        description="Run the table: read throws from the camera, keep the games, serve the tablet page "
                    "and its API. With no options: the Pi camera or a webcam (with neither, dice are "
                    "entered on the tablet), http://127.0.0.1:8000. `--camera demo` replays sample throws.",
    )
    parser.add_argument("--host", help="address to listen on (default 127.0.0.1; 0.0.0.0 for tablets)")
    parser.add_argument("--port", type=int, help="TCP port (default 8000)")
    parser.add_argument("--camera", help="auto, pi, usb:N, /dev/videoN, a stream URL, replay:PATH, demo, "
                                         "or off (default auto)")
    parser.add_argument("--data-dir", type=Path, help="where the games database lives")
    parser.add_argument("--pin", help="a 4-12 digit PIN that every change must carry")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="another host name the table answers to (repeatable)")
    parser.add_argument("--config", type=Path, help="a settings file (default ~/.config/yacht-table/config.toml)")
    parser.set_defaults(run=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    from hardware.gpio import open_table_panel
    from scorer.advisor import Advisor
    from scorer.store import StoreError

    from .app import create_app
    from .engine import load_settings, open_engine
    from .server import TableServer, serve

    settings = load_settings(args.config, host=args.host, port=args.port, pin=args.pin,
                             camera=args.camera, data_dir=args.data_dir)
    if args.allow_host:
        settings = dataclasses.replace(
            settings, allowed_hosts=settings.allowed_hosts + tuple(args.allow_host))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    try:
        panel = open_table_panel(settings.button_pin, settings.light_pin)
    except RuntimeError as error:  # gpiozero missing or the pins unusable: say so in one line
        raise ValueError(str(error)) from None
    try:
        engine = open_engine(settings, advisor=Advisor.load(settings.data_dir))
    except (StoreError, sqlite3.Error, OSError) as error:
        if panel is not None:
            panel.close()
        raise ValueError(f"cannot open the games database in {settings.data_dir}: {error}") from None
    if panel is not None:
        engine.attach_panel(panel)
    app = create_app(engine)
    try:
        server = TableServer(app, settings.host, settings.port, live_ended=engine.end_streams)

        def ready() -> None:
            print(f"Yacht Table on http://{_url_host(settings.host)}:{server.port}/  camera: {settings.camera}, "
                  f"games: {Path(settings.data_dir) / 'games.sqlite3'}", file=sys.stderr, flush=True)

        try:
            serve(server, ready)  # until SIGTERM or Ctrl-C; the tablets' streams are ended first
        except OSError as error:
            raise ValueError(f"cannot listen on {settings.host}:{settings.port}: {error.strerror}") from None
    finally:
        engine.close()
        if panel is not None:
            panel.set_light(False)
            panel.close()
    return 0


def _url_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
