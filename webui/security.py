"""Guards for a table on a home Wi-Fi: which Host names are ours, which Origins may write, the PIN.

Pure checks, without Flask: webui.app applies them to every request.
"""

from __future__ import annotations

import hmac
import ipaddress
import math
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_REQUEST_BYTES = 16 * 1024
PIN_HEADER = "X-Table-Pin"
# Each address may mistype the PIN a few times; after that every wrong PIN makes it wait twice as
# long as the last, up to a quarter of an hour: about 4 guesses an hour, so a 4-digit PIN holds for
# weeks against one device (docs/serving.md has the arithmetic), while a fumbling player waits 30 s.
PIN_FREE_FAILURES = 5
PIN_FIRST_LOCKOUT_SECONDS = 30.0
PIN_MAX_LOCKOUT_SECONDS = 15 * 60.0
PIN_FORGET_SECONDS = 24 * 3600.0  # an address with no wrong PIN for a day starts afresh
PIN_TRACKED_ADDRESSES = 4096  # bounds the memory a flood of addresses can take
_WILDCARD_HOSTS = {"0.0.0.0", "::", ""}


class Refused(Exception):
    """A request turned away; `status` and `code` go into the JSON error."""

    def __init__(self, status: int, code: str, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.retry_after = retry_after


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


def check_origin(origin: str | None, fetch_site: str | None, host_header: str | None,
                 scheme: str = "http") -> None:
    """A write must come from a page served by this table: its Origin (when the browser sends one)
    has the request's scheme and names the same host and port as the request's Host."""
    if origin is not None:
        if not _same_origin(origin, scheme, host_header or ""):
            shown = origin if len(origin) <= 80 else origin[:80] + "..."
            raise Refused(403, "origin_refused",
                          f"writes are accepted only from this table's own page, not from {shown!r}")
    elif fetch_site == "cross-site":
        raise Refused(403, "origin_refused", "writes are accepted only from this table's own page")


def _same_origin(origin: str, scheme: str, host_header: str) -> bool:
    try:
        parts = urlsplit(origin)
        parts.port  # noqa: B018 - parsing the port is what finds 'http://host:x' malformed
    except ValueError:  # 'http://[' and the like: not an origin this table served
        return False
    return (parts.scheme.lower() == scheme.lower() and bool(parts.netloc)
            and parts.netloc.lower() == host_header.lower() and not parts.path
            and not parts.query and not parts.fragment)


@dataclass
class _Guesses:
    wrong: int = 0  # wrong PINs in a row from this address
    last_wrong: float = 0.0
    locked_until: float = 0.0


class PinGuard:
    """Checks the table PIN and slows guessing down, address by address: a device sending wrong
    PINs locks out itself, never the tablets that know the PIN."""

    def __init__(self, pin: str | None, clock: Callable[[], float] = time.monotonic):
        self.pin = pin
        self._clock = clock
        self._guesses: dict[str, _Guesses] = {}
        self._lock = threading.Lock()

    def check(self, given: str | None, client: str) -> None:
        """Refused unless `given` is the PIN; `client` is the request's address."""
        if self.pin is None:
            return
        if not given:
            raise Refused(403, "pin_required", "this table has a PIN; enter it to make changes")
        with self._lock:
            now = self._clock()
            guesses = self._guesses.get(client)
            if guesses is not None and now < guesses.locked_until:
                wait = guesses.locked_until - now
                raise Refused(429, "pin_locked",
                              f"too many wrong PINs from this device; try again in {math.ceil(wait)} seconds",
                              retry_after=wait)
            if hmac.compare_digest(given.encode(), self.pin.encode()):
                self._guesses.pop(client, None)
                return
            if guesses is None or now - guesses.last_wrong > PIN_FORGET_SECONDS:
                guesses = self._guesses[client] = _Guesses()
                self._forget_oldest()
            guesses.wrong += 1
            guesses.last_wrong = now
            if guesses.wrong >= PIN_FREE_FAILURES:
                guesses.locked_until = now + lockout_seconds(guesses.wrong)
        raise Refused(403, "pin_wrong", "wrong PIN")

    def _forget_oldest(self) -> None:
        if len(self._guesses) > PIN_TRACKED_ADDRESSES:
            oldest = min(self._guesses, key=lambda address: self._guesses[address].last_wrong)
            del self._guesses[oldest]


def lockout_seconds(wrong_in_a_row: int) -> float:
    """How long an address waits after its `wrong_in_a_row`-th wrong PIN (0 while it may still try)."""
    if wrong_in_a_row < PIN_FREE_FAILURES:
        return 0.0
    doublings = min(wrong_in_a_row - PIN_FREE_FAILURES, 16)
    return min(PIN_FIRST_LOCKOUT_SECONDS * 2 ** doublings, PIN_MAX_LOCKOUT_SECONDS)
