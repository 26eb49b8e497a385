"""The JSON API under /api/ (contract: README, section "API")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request

from .events import Broadcaster, sse_stream
from .service import TableService

api = Blueprint("api", __name__, url_prefix="/api")

MJPEG_BOUNDARY = "frame"
MJPEG_REPEAT_SECONDS = 5.0


def error_response(status: int, code: str, message: str, field: str | None = None) -> Response:
    response = jsonify({"error": {"code": code, "message": message, "field": field}})
    response.status_code = status
    return response


class BadRequest(Exception):
    def __init__(self, code: str, message: str, field: str | None = None):
        super().__init__(message)
        self.code = code
        self.field = field


def _service() -> TableService:
    return current_app.extensions["yacht_table"]


def _preview() -> Broadcaster | None:
    return current_app.extensions.get("yacht_table_preview")


def _body() -> dict[str, Any]:
    """The request's JSON object, or BadRequest saying what is wrong with it."""
    if not request.is_json:
        raise BadRequest("json_required", "send the request body as JSON (Content-Type: application/json)")
    try:
        body = json.loads(request.get_data(cache=False).decode("utf-8"))
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser's stack
        raise BadRequest("invalid_json", "the request body is not valid UTF-8 JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("invalid_json", "the request body must be a JSON object")
    return body


def _require(body: dict[str, Any], name: str) -> Any:
    if name not in body:
        raise BadRequest("missing_field", f"the field {name!r} is required", name)
    return body[name]


def _state(status: int = 200) -> Response:
    response = Response(_service().state_json(), status=status, mimetype="application/json")
    response.headers["Cache-Control"] = "no-store"
    return response


@api.get("/state")
def get_state():
    return _state()


@api.post("/games")
def new_game():
    body = _body()
    _service().new_game(_require(body, "version"), _require(body, "players"))
    return _state(201)


@api.post("/games/resume")
def resume_game():
    body = _body()
    _service().resume(_require(body, "version"), _require(body, "game_id"))
    return _state()


@api.post("/roll")
def roll():
    body = _body()
    _service().roll(_require(body, "version"), _require(body, "dice"))
    return _state()


@api.post("/correct")
def correct():
    body = _body()
    version = _require(body, "version")
    if "dice" in body:
        _service().correct(version, body["dice"])
    elif "die" in body:
        _service().correct_die(version, body["die"], _require(body, "value"))
    else:
        raise BadRequest("missing_field", "send either 'die' and 'value', or all five 'dice'", "dice")
    return _state()


@api.post("/record")
def record():
    body = _body()
    _service().record(_require(body, "version"), _require(body, "category"))
    return _state()


@api.post("/undo")
def undo():
    _service().undo(_require(_body(), "version"))
    return _state()


@api.get("/games")
def list_games():
    return jsonify({"games": _service().past_games()})


@api.get("/games/<int:game_id>")
def show_game(game_id: int):
    return jsonify({"game": _service().game_view(game_id)})


@api.get("/events")
def events():
    response = Response(sse_stream(_service().broadcaster), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response


def _mjpeg_part(jpeg: bytes) -> bytes:
    return (f"--{MJPEG_BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(jpeg)}\r\n\r\n"
            .encode() + jpeg + b"\r\n")


def mjpeg_stream(preview: Broadcaster) -> Iterator[bytes]:
    """Each new preview frame once; the last one again every few seconds while the picture is still,
    so the connection is seen to be alive."""
    version, jpeg = preview.latest()
    if jpeg is not None:
        yield _mjpeg_part(jpeg)
    while not preview.closed:
        newer = preview.wait_newer(version, MJPEG_REPEAT_SECONDS)
        if newer is not None:
            version, jpeg = newer
        if jpeg is not None and not preview.closed:
            yield _mjpeg_part(jpeg)


@api.get("/camera.mjpg")
def camera_stream():
    preview = _preview()
    if preview is None:
        return error_response(404, "no_camera", "no camera is configured for this table")
    response = Response(mjpeg_stream(preview),
                        mimetype=f"multipart/x-mixed-replace; boundary={MJPEG_BOUNDARY}")
    response.headers["Cache-Control"] = "no-store"
    return response


@api.get("/camera/still.jpg")
def camera_still():
    still = current_app.extensions.get("yacht_table_still")
    jpeg = still() if still is not None else None
    if jpeg is None:
        return error_response(404, "no_reading", "no throw has been read yet")
    response = Response(jpeg, mimetype="image/jpeg")
    response.headers["Cache-Control"] = "no-store"
    return response
