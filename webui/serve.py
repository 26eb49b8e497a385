"""`yacht-table serve`: the table in one process (it owns the camera) behind the waitress WSGI server."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import signal
import sqlite3
import sys
from pathlib import Path

# Four tablets, each holding an event stream and a camera preview open (8 threads tied up for as
# long as they watch), plus room for their ordinary requests and a few spare for reconnections.
THREADS = 24
CAMERA_OFF = "off"

log = logging.getLogger(__name__)


def add_commands(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "serve",
        help="run the table: camera, game and the tablet page",
        description="Run the table: read throws from the camera, keep the games, serve the tablet page "
                    "and its API. With no options: the camera found (else a replay of samples/), "
                    "http://127.0.0.1:8000.",
    )
    parser.add_argument("--host", help="address to listen on (default 127.0.0.1; 0.0.0.0 for tablets)")
    parser.add_argument("--port", type=int, help="TCP port (default 8000)")
    parser.add_argument("--camera", help="auto, pi, usb:N, replay:PATH, or off (default auto)")
    parser.add_argument("--data-dir", type=Path, help="where the games database lives")
    parser.add_argument("--pin", help="a 4-12 digit PIN that every change must carry")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="another host name the table answers to (repeatable)")
    parser.add_argument("--config", type=Path, help="a settings file (default ~/.config/yacht-table/config.toml)")
    parser.set_defaults(run=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    import waitress

    from hardware.camera import open_camera
    from hardware.config import load_settings
    from hardware.gpio import open_table_panel
    from scorer.advisor import Advisor
    from scorer.store import StoreError

    from .app import attach_panel, create_app, end_streams, shutdown

    camera_off = args.camera == CAMERA_OFF
    settings = load_settings(args.config, host=args.host, port=args.port, pin=args.pin,
                             camera=None if camera_off else args.camera, data_dir=args.data_dir)
    if args.allow_host:
        settings = dataclasses.replace(
            settings, allowed_hosts=settings.allowed_hosts + tuple(args.allow_host))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    def open_configured_camera():
        return open_camera(settings.camera, **settings.camera_options())

    try:
        panel = open_table_panel(settings.button_pin, settings.light_pin)
    except RuntimeError as error:  # gpiozero missing or the pins unusable: say so in one line
        raise ValueError(str(error)) from None
    try:
        advisor = Advisor.load(settings.data_dir)
        app = create_app(settings, camera=None if camera_off else open_configured_camera, advisor=advisor)
    except (StoreError, sqlite3.Error, OSError) as error:
        if panel is not None:
            panel.close()
        raise ValueError(f"cannot open the games database in {settings.data_dir}: {error}") from None
    if panel is not None:
        attach_panel(app, panel)
    try:
        try:
            server = waitress.create_server(app, host=settings.host, port=settings.port,
                                            threads=THREADS, ident="yacht-table")
        except OSError as error:
            raise ValueError(f"cannot listen on {settings.host}:{settings.port}: {error.strerror}") from None

        def stop(signum, frame):
            # The tablets' streams end only when told: end them before waitress waits for its threads
            # (it gives up after 5 s, and the streams then fail on its closed socket).
            end_streams(app)
            raise KeyboardInterrupt

        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, stop)
        camera = CAMERA_OFF if camera_off else settings.camera
        print(f"Yacht Table on http://{_url_host(settings.host)}:{settings.port}/  camera: {camera}, "
              f"games: {Path(settings.data_dir) / 'games.sqlite3'}", file=sys.stderr, flush=True)
        try:
            server.run()  # waitress ends its loop on the KeyboardInterrupt itself
        except KeyboardInterrupt:
            pass  # one that came before the loop started
        finally:
            server.close()
    finally:
        shutdown(app)
        if panel is not None:
            panel.set_light(False)
            panel.close()
    return 0


def _url_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
