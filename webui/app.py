"""The HTTP adapter: the tablet page and the JSON API (docs/api.md) over one running table.

This is the only module that knows Flask. It holds the Engine under one extension key, turns each
request into a table action, and each refusal into a JSON error whose status follows the kind of
refusal. Everything the table does happens in webui.engine.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

from scorer.actions import Correct, Hold, Record, Undo
from scorer.game import MAX_NAME_LENGTH, MAX_PLAYERS, InvalidInputError, StateConflictError
from scorer.rules import CATEGORIES
from scorer.store import StorageFullError, StorageReadOnlyError

from . import security
from .engine import (
    ChooseThrow,
    ConflictError,
    CorrectDie,
    Engine,
    InvalidRequestError,
    NewGame,
    NotFoundError,
    Resume,
    Throw,
)
from .engine.events import Broadcaster
from .engine.export import game_csv
from .i18n import LANGUAGES, all_catalogs
from .live import LiveStream

log = logging.getLogger(__name__)

EXTENSION = "yacht_table"
STATIC_DIR = Path(__file__).parent / "static"
KEEP_ALIVE_SECONDS = 15.0
RECONNECT_MILLISECONDS = 2000
MJPEG_BOUNDARY = "frame"
MJPEG_REPEAT_SECONDS = 5.0

# The HTTP status of each kind of refusal, most specific first.
STATUS_OF_REFUSAL: tuple[tuple[type[Exception], int], ...] = (
    (InvalidRequestError, 400),
    (InvalidInputError, 400),
    (NotFoundError, 404),
    (ConflictError, 409),
    (StateConflictError, 409),
    (StorageFullError, 507),  # the table's own disk: nothing the tablet can change, said plainly
    (StorageReadOnlyError, 503),
)
_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}


class JsonRequiredError(InvalidRequestError):
    code = "json_required"


class InvalidJsonError(InvalidRequestError):
    code = "invalid_json"


class MissingFieldError(InvalidRequestError):
    code = "missing_field"


def create_app(engine: Engine) -> Flask:
    """The tablet page and API over `engine`, guarded by its settings' host names and PIN. The
    caller owns the engine: it starts and closes it."""
    app = Flask(__name__)
    app.debug = False  # even with FLASK_DEBUG set: a table on the home Wi-Fi never runs in debug mode
    app.extensions[EXTENSION] = engine
    _install_guards(app, engine)
    _install_error_handlers(app)
    app.register_blueprint(api)
    app.register_blueprint(pages)
    return app


def _engine() -> Engine:
    return current_app.extensions[EXTENSION]


def error_response(status: int, code: str, message: str, field: str | None = None,
                   details: dict[str, Any] | None = None) -> Response:
    response = jsonify({"error": {"code": code, "message": message, "field": field, **(details or {})}})
    response.status_code = status
    return response


# --- guards and errors ---------------------------------------------------------------------------

def _install_guards(app: Flask, engine: Engine) -> None:
    """Check every request's Host; for writes (anything but GET/HEAD/OPTIONS) also the Origin and
    the PIN (webui.security)."""
    settings = engine.settings
    allowed = security.allowed_host_names(settings.host, settings.allowed_hosts)
    pins = security.PinGuard(settings.pin)
    app.config["MAX_CONTENT_LENGTH"] = security.MAX_REQUEST_BYTES

    @app.before_request
    def guard():
        try:
            security.check_host(request.headers.get("Host"), allowed)
            if request.method not in ("GET", "HEAD", "OPTIONS"):
                security.check_origin(request.headers.get("Origin"), request.headers.get("Sec-Fetch-Site"),
                                      request.headers.get("Host"), request.scheme)
                pins.check(request.headers.get(security.PIN_HEADER), request.remote_addr or "")
        except security.Refused as refusal:
            response = error_response(refusal.status, refusal.code, str(refusal))
            if refusal.retry_after is not None:
                response.headers["Retry-After"] = str(math.ceil(refusal.retry_after))
            return response
        return None

    @app.after_request
    def harden(response):
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        return response


def _install_error_handlers(app: Flask) -> None:
    for kind, status in STATUS_OF_REFUSAL:
        app.register_error_handler(kind, _refusal_handler(status))

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


def _refusal_handler(status: int):
    def refused(error: Exception):
        return error_response(status, getattr(error, "code", "refused"), str(error), getattr(error, "field", None),
                              getattr(error, "details", None))
    return refused


# --- the JSON API --------------------------------------------------------------------------------

api = Blueprint("api", __name__, url_prefix="/api")


def _body() -> dict[str, Any]:
    """The request's JSON object, or the refusal saying what is wrong with it."""
    if not request.is_json:
        raise JsonRequiredError("send the request body as JSON (Content-Type: application/json)")
    try:
        body = json.loads(request.get_data(cache=False).decode("utf-8"))
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser's stack
        raise InvalidJsonError("the request body is not valid UTF-8 JSON") from None
    if not isinstance(body, dict):
        raise InvalidJsonError("the request body must be a JSON object")
    return body


def _require(body: dict[str, Any], name: str) -> Any:
    if name not in body:
        raise MissingFieldError(f"the field {name!r} is required", name)
    return body[name]


def _state(status: int = 200) -> Response:
    response = Response(_engine().table.state_json(), status=status, mimetype="application/json")
    response.headers["Cache-Control"] = "no-store"
    return response


@dataclass(frozen=True)
class ActedOn:
    """What a write was made against: the state version and, as the page sends it, what its player
    saw of the game (Table.apply's `seen`)."""

    version: Any
    seen: Any = None


def _request() -> tuple[dict[str, Any], ActedOn]:
    """The request's body and what it was made against."""
    body = _body()
    return body, ActedOn(_require(body, "version"), body.get("seen"))


def _play(acted_on: ActedOn, action: Any, status: int = 200) -> Response:
    _engine().table.apply(acted_on.version, action, acted_on.seen)
    return _state(status)


@api.get("/state")
def get_state():
    return _state()


@api.post("/games")
def new_game():
    body, acted_on = _request()
    return _play(acted_on, NewGame(_require(body, "players")), 201)


@api.post("/games/resume")
def resume_game():
    body, acted_on = _request()
    return _play(acted_on, Resume(_require(body, "game_id")))


@api.post("/roll")
def roll():
    body, acted_on = _request()
    return _play(acted_on, Throw(_require(body, "dice")))


@api.post("/hold")
def hold():
    body, acted_on = _request()
    return _play(acted_on, Hold(_require(body, "positions")))


@api.post("/choose")
def choose_throw():
    body, acted_on = _request()
    return _play(acted_on, ChooseThrow(_require(body, "choice")))


@api.post("/throw")
def throw():
    """The demo camera throws (409 not_a_demo for a real one); the roll follows as the camera's."""
    _request()
    _engine().throw()
    return _state(202)


@api.post("/correct")
def correct():
    body, acted_on = _request()
    if "dice" in body:
        return _play(acted_on, Correct(body["dice"]))
    if "die" in body:
        return _play(acted_on, CorrectDie(body["die"], _require(body, "value")))
    raise MissingFieldError("send either 'die' and 'value', or all five 'dice'", "dice")


@api.post("/record")
def record():
    body, acted_on = _request()
    return _play(acted_on, Record(_require(body, "category")))


@api.post("/undo")
def undo():
    _, acted_on = _request()
    return _play(acted_on, Undo())


@api.get("/games")
def list_games():
    return jsonify({"games": _engine().table.past_games()})


@api.get("/games/<int:game_id>")
def show_game(game_id: int):
    return jsonify({"game": _engine().table.game_view(game_id)})


@api.get("/games/<int:game_id>/export.json")
def export_game_json(game_id: int):
    return _download(json.dumps(_engine().table.game_record(game_id), indent=2, ensure_ascii=False),
                     "application/json", f"yacht-game-{game_id}.json")


@api.get("/games/<int:game_id>/export.csv")
def export_game_csv(game_id: int):
    return _download(game_csv(_engine().table.game_record(game_id)), "text/csv", f"yacht-game-{game_id}.csv")


def _download(text: str, mimetype: str, filename: str) -> Response:
    response = Response(text, mimetype=mimetype)
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@api.get("/stats")
def stats():
    return jsonify({"players": _engine().table.player_stats()})


@api.get("/events")
def events():
    # direct_passthrough: the server gets the LiveStream itself, to follow it on its event loop
    response = Response(sse_stream(_engine().table.broadcaster), mimetype="text/event-stream",
                        direct_passthrough=True)
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response


@api.get("/camera.mjpg")
def camera_stream():
    preview = _engine().preview
    if preview is None:
        return error_response(404, "no_camera", "no camera is configured for this table")
    response = Response(mjpeg_stream(preview), direct_passthrough=True,
                        mimetype=f"multipart/x-mixed-replace; boundary={MJPEG_BOUNDARY}")
    response.headers["Cache-Control"] = "no-store"
    return response


@api.get("/camera/still.jpg")
def camera_still():
    jpeg = _engine().still_jpeg()
    if jpeg is None:
        return error_response(404, "no_reading", "no throw has been read yet")
    response = Response(jpeg, mimetype="image/jpeg")
    response.headers["Cache-Control"] = "no-store"
    return response


# --- streams -------------------------------------------------------------------------------------

def sse_event(version: int, text: str) -> str:
    return f"id: {version}\nevent: state\ndata: {text}\n\n"


def _sse_opening(version: int, text: str) -> bytes:
    return (f"retry: {RECONNECT_MILLISECONDS}\n" + sse_event(version, text)).encode()


def _sse_change(version: int, text: str) -> bytes:
    return sse_event(version, text).encode()


def _sse_keep_alive(version: int, text: str) -> bytes:
    return b": keep-alive\n\n"


def sse_stream(broadcaster: Broadcaster, keep_alive: float = KEEP_ALIVE_SECONDS) -> LiveStream:
    """The event stream: the current state at once, then every change, with a comment line whenever
    `keep_alive` seconds pass in silence so proxies and idle timeouts keep it open."""
    return LiveStream("events", broadcaster, opening=_sse_opening, change=_sse_change,
                      idle=_sse_keep_alive, idle_seconds=keep_alive)


def _mjpeg_part(version: int, jpeg: bytes | None) -> bytes | None:
    if jpeg is None:
        return None
    return (f"--{MJPEG_BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(jpeg)}\r\n\r\n"
            .encode() + jpeg + b"\r\n")


def mjpeg_stream(preview: Broadcaster) -> LiveStream:
    """Each new preview frame once; the last one again every few seconds while the picture is still,
    so the connection is seen to be alive."""
    return LiveStream("camera", preview, opening=_mjpeg_part, change=_mjpeg_part, idle=_mjpeg_part,
                      idle_seconds=MJPEG_REPEAT_SECONDS)


# --- the tablet page -----------------------------------------------------------------------------

# Everything is served by the table itself (no CDN: the table may have no internet). Asset URLs
# carry a hash of the files so a tablet never keeps running an old script after an update.
pages = Blueprint("pages", __name__, template_folder="templates", static_folder="static",
                  static_url_path="/assets")


@lru_cache(maxsize=1)
def asset_version() -> str:
    digest = hashlib.sha256()
    for path in sorted(STATIC_DIR.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(STATIC_DIR).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


@pages.get("/")
@pages.get("/history")
def tablet_page():
    return render_template(
        "tablet.html",
        asset_version=asset_version(),
        page_config={
            "languages": list(LANGUAGES),
            "categories": list(CATEGORIES),
            "max_players": MAX_PLAYERS,
            "max_name_length": MAX_NAME_LENGTH,
            "catalogs": all_catalogs(),
        },
    )
