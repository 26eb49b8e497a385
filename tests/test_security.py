"""The guards of a table on a home Wi-Fi: the PIN lockout is per device, and the Origin check
refuses whatever is not this table's own page, malformed headers included, with a 403."""

from __future__ import annotations

import http.client
import json

import pytest
from table_helpers import built_advisor, http_json, served, table_app

from webui import security
from webui.security import PinGuard, Refused, check_origin, lockout_seconds

PIN = "2468"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def refusal_code(guard: PinGuard, given: str, client: str) -> str | None:
    try:
        guard.check(given, client)
    except Refused as refusal:
        return refusal.code
    return None


def test_wrong_pins_from_one_address_do_not_lock_out_another():
    clock = FakeClock()
    guard = PinGuard(PIN, clock)
    for _ in range(security.PIN_FREE_FAILURES):
        assert refusal_code(guard, "0000", "10.0.0.66") == "pin_wrong"
    assert refusal_code(guard, PIN, "10.0.0.66") == "pin_locked"  # even the right PIN, while locked
    assert refusal_code(guard, PIN, "10.0.0.12") is None
    assert refusal_code(guard, "1111", "10.0.0.12") == "pin_wrong"  # a typo there is not locked yet
    assert refusal_code(guard, PIN, "10.0.0.12") is None


def test_each_wrong_pin_after_the_free_ones_doubles_the_wait_up_to_a_cap():
    waits = [lockout_seconds(n) for n in range(1, 14)]
    free = security.PIN_FREE_FAILURES - 1
    assert waits[:free] == [0.0] * free
    assert waits[free:free + 5] == [30.0, 60.0, 120.0, 240.0, 480.0]
    assert set(waits[free + 5:]) == {security.PIN_MAX_LOCKOUT_SECONDS}

    clock = FakeClock()
    guard = PinGuard(PIN, clock)
    for _ in range(security.PIN_FREE_FAILURES):
        refusal_code(guard, "0000", "a")
    clock.now += 29.0
    assert refusal_code(guard, PIN, "a") == "pin_locked"
    clock.now += 1.5
    assert refusal_code(guard, "0001", "a") == "pin_wrong"  # the 6th wrong: locked for 60 s now
    clock.now += 59.0
    assert refusal_code(guard, PIN, "a") == "pin_locked"
    clock.now += 1.5
    assert refusal_code(guard, PIN, "a") is None  # the right PIN clears the address's record
    assert refusal_code(guard, "0002", "a") == "pin_wrong"
    assert refusal_code(guard, PIN, "a") is None


def test_an_address_with_no_wrong_pin_for_a_day_starts_afresh():
    clock = FakeClock()
    guard = PinGuard(PIN, clock)
    for _ in range(security.PIN_FREE_FAILURES - 1):
        refusal_code(guard, "0000", "a")
    clock.now += security.PIN_FORGET_SECONDS + 1
    assert refusal_code(guard, "0000", "a") == "pin_wrong"
    assert refusal_code(guard, PIN, "a") is None  # that wrong PIN was the first of a new count


def test_brute_forcing_a_four_digit_pin_from_one_address_takes_days():
    """An attacker trying every PIN in turn as fast as the guard lets it; the PIN is the median
    one, so this is the expected time over random PINs."""
    clock = FakeClock()
    started = clock.now
    guard = PinGuard("5000", clock)
    guess = 0
    while True:
        try:
            guard.check(f"{guess:04d}", "attacker")
            break
        except Refused as refusal:
            if refusal.code == "pin_locked":
                clock.now += refusal.retry_after or 0.0
            else:
                guess += 1
    days = (clock.now - started) / 86400
    assert guess == 5000
    assert days > 30, days  # about 52 days: 4 guesses an hour once the wait is at its cap


def test_the_guard_remembers_a_bounded_number_of_addresses():
    clock = FakeClock()
    guard = PinGuard(PIN, clock)
    for address in range(security.PIN_TRACKED_ADDRESSES + 50):
        clock.now += 1
        refusal_code(guard, "0000", f"10.{address // 256}.{address % 256}.1")
    assert len(guard._guesses) <= security.PIN_TRACKED_ADDRESSES + 1


def post_from(base_url: str, source: str, pin: str) -> tuple[int, dict]:
    """A write from the loopback address `source`, as a tablet at that address would send it."""
    version = http_json("GET", f"{base_url}/api/state")[1]["version"]
    host, port = base_url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10, source_address=(source, 0))
    try:
        connection.request("POST", "/api/undo", body=json.dumps({"version": version}),
                           headers={"Content-Type": "application/json", "X-Table-Pin": pin})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_a_real_server_locks_out_the_guessing_address_only(tmp_path):
    app = table_app(tmp_path, pin=PIN, advisor=built_advisor())
    with served(app) as server:
        answers = [post_from(server, "127.0.0.2", f"{guess:04d}") for guess in range(12)]
        codes = [body["error"]["code"] for _, body in answers]
        free = security.PIN_FREE_FAILURES
        assert codes == ["pin_wrong"] * free + ["pin_locked"] * (12 - free)
        assert post_from(server, "127.0.0.2", PIN)[1]["error"]["code"] == "pin_locked"
        # The tablet at another address, with the right PIN, gets through to the game itself (which
        # has nothing to undo: the PIN was accepted).
        status, body = post_from(server, "127.0.0.3", PIN)
        assert (status, body["error"]["code"]) == (409, "no_game")


@pytest.mark.parametrize("origin", [
    "http://[", "http://[::1", "http://localhost:x", "http://localhost:99999", "https://localhost",
    "ftp://localhost", "http://localhost/path", "http://user@localhost", "//localhost", "localhost",
    "null", "", "http://", "http://local host", "\x00", "http://localhost?x", "x" * 5000,
])
def test_a_foreign_or_malformed_origin_is_refused_never_an_error(origin):
    with pytest.raises(Refused) as refused:
        check_origin(origin, None, "localhost", "http")
    assert refused.value.status == 403 and len(str(refused.value)) < 200


def test_the_origin_must_have_the_requests_scheme():
    check_origin("http://localhost", None, "localhost", "http")
    check_origin("https://Table.local:8443", None, "table.local:8443", "https")
    with pytest.raises(Refused):
        check_origin("http://table.local:8443", None, "table.local:8443", "https")


def test_a_malformed_origin_on_a_write_is_answered_403(tmp_path):
    app = table_app(tmp_path, advisor=built_advisor())
    http = app.test_client()
    for origin in ("http://[", "https://localhost", "http://localhost:"):
        response = http.post("/api/undo", json={"version": 0}, headers={"Origin": origin})
        assert response.status_code == 403, (origin, response.get_json())
        assert response.get_json()["error"]["code"] == "origin_refused"
