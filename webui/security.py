"""Guards for a table on a home Wi-Fi: which Host names are ours, which Origins may write, the PIN.

Pure checks first (testable without Flask), then `install(app, ...)` wiring them into requests.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from flask import Flask, request

MAX_REQUEST_BYTES = 16 * 1024
PIN_HEADER = "X-Table-Pin"
PIN_FAILURES_ALLOWED = 10
PIN_LOCKOUT_SECONDS = 60.0
_WILDCARD_HOSTS = {"0.0.0.0", "::", ""}


class Refused(Exception):
    """A request turned away; `status` and `code` go into the JSON error."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status = status
        self.code = code


def split_host(host_header: str) -> str:
    """The name part of a Host header ('[::1]:8000' -> '::1', 'Table.local:80' -> 'table.local')."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def allowed_host_names(configured_host: str, extras: Iterable[str] = ()) -> frozenset[str]:
    """localhost, this machine's name (and name.local for mDNS), the configured host, the extras."""
    names = {"localhost", "127.0.0.1", "::1"}
    hostname = socket.gethostname().lower()
    names.update({hostname, f"{hostname}.local"})
    if configured_host not in _WILDCARD_HOSTS:
        names.add(configured_host.lower())
    names.update(name.lower() for name in extras)
    return frozenset(names)


def _is_ip_literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def check_host(host_header: str | None, allowed: frozenset[str]) -> None:
    """DNS rebinding guard: a page on someone else's domain that resolves to the table has that
    domain in its Host header. Addresses typed as numbers cannot be rebound, so they all pass."""
    if not host_header:
        raise Refused(400, "host_required", "the request has no Host header")
    name = split_host(host_header)
    if name in allowed or _is_ip_literal(name):
        return
    raise Refused(403, "host_not_allowed",
                  f"this table does not answer to the name {name!r}; add it to allowed_hosts")


def check_origin(origin: str | None, fetch_site: str | None, host_header: str | None) -> None:
    """A write must come from a page served by this table: its Origin (when the browser sends one)
    names the same host and port as the request's Host."""
    if origin is not None:
        parts = urlsplit(origin)
        if origin == "null" or not parts.netloc or parts.netloc.lower() != (host_header or "").lower():
            raise Refused(403, "origin_refused",
                          f"writes are accepted only from this table's own page, not from {origin!r}")
    elif fetch_site == "cross-site":
        raise Refused(403, "origin_refused", "writes are accepted only from this table's own page")


class PinGuard:
    """Checks the table PIN and locks out guessing: after PIN_FAILURES_ALLOWED wrong PINs within
    PIN_LOCKOUT_SECONDS, every PIN is refused until the window has passed."""

    def __init__(self, pin: str | None, clock: Callable[[], float] = time.monotonic):
        self.pin = pin
        self._clock = clock
        self._failures: list[float] = []
        self._lock = threading.Lock()

    def check(self, given: str | None) -> None:
        if self.pin is None:
            return
        if not given:
            raise Refused(403, "pin_required", "this table has a PIN; enter it to make changes")
        with self._lock:
            now = self._clock()
            self._failures = [t for t in self._failures if now - t < PIN_LOCKOUT_SECONDS]
            if len(self._failures) >= PIN_FAILURES_ALLOWED:
                raise Refused(429, "pin_locked",
                              f"too many wrong PINs; try again in {PIN_LOCKOUT_SECONDS:.0f} seconds")
            if not hmac.compare_digest(given.encode(), self.pin.encode()):
                self._failures.append(now)
                raise Refused(403, "pin_wrong", "wrong PIN")


def install(app: Flask, *, host: str, allowed_hosts: Iterable[str], pin: str | None,
            error_response: Callable[[int, str, str, str | None], object]) -> None:
    """Check every request's Host; for writes (anything but GET/HEAD/OPTIONS) also the Origin and
    the PIN. `error_response(status, code, message, field)` builds the refusal."""
    allowed = allowed_host_names(host, allowed_hosts)
    pins = PinGuard(pin)
    app.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    app.extensions["yacht_table_pin_guard"] = pins

    @app.before_request
    def guard():
        try:
            check_host(request.headers.get("Host"), allowed)
            if request.method not in ("GET", "HEAD", "OPTIONS"):
                check_origin(request.headers.get("Origin"), request.headers.get("Sec-Fetch-Site"),
                             request.headers.get("Host"))
                pins.check(request.headers.get(PIN_HEADER))
        except Refused as refusal:
            return error_response(refusal.status, refusal.code, str(refusal), None)
        return None

    @app.after_request
    def harden(response):
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        return response
