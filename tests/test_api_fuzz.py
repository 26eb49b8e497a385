"""Property: whatever a tablet, a script or an attacker sends, the API answers without a 500, a
refusal changes nothing, an acceptance moves the version by one, the game stays consistent, and
what is on disk replays to what is in memory."""

from __future__ import annotations

import json
import tempfile
from typing import Any
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from table_helpers import built_advisor, check_game, error_fields, shutdown, table_app
from werkzeug.test import EnvironBuilder, run_wsgi_app

from scorer import CATEGORIES
from webui.app import EXTENSION

WRITE_PATHS = ["/api/games", "/api/games/resume", "/api/roll", "/api/correct", "/api/record", "/api/undo"]

odd_text = st.one_of(
    st.text(max_size=30),
    st.text(alphabet=st.characters(min_codepoint=0x80), max_size=40),
    st.just("x" * 5000),
    st.just("\u202eAna\u0000"),
    st.just("\ud800"),
    st.just("Ana\tBen"),
    st.just("  "),
)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-10, 10), st.integers(), st.floats(), odd_text)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=6)
                           | st.dictionaries(odd_text, inner, max_size=4), max_leaves=12)
faces = st.integers(1, 6)
dice = st.one_of(st.lists(faces, min_size=5, max_size=5), json_values)
players = st.one_of(st.lists(st.sampled_from(["Ana", "Ben", "Zoé", "Ωmega", "李"]), min_size=1, max_size=3,
                             unique=True), st.lists(odd_text, max_size=10), json_values)
categories = st.one_of(st.sampled_from(CATEGORIES), json_values)


def body_for(path: str):
    fields = {
        "/api/games": st.fixed_dictionaries({"players": players}),
        "/api/games/resume": st.fixed_dictionaries({"game_id": st.one_of(st.integers(0, 4), json_values)}),
        "/api/roll": st.fixed_dictionaries({"dice": dice}),
        "/api/correct": st.one_of(st.fixed_dictionaries({"dice": dice}),
                                  st.fixed_dictionaries({"die": st.one_of(st.integers(-1, 5), json_values),
                                                         "value": st.one_of(faces, json_values)})),
        "/api/record": st.fixed_dictionaries({"category": categories}),
        "/api/undo": st.just({}),
    }[path]
    return fields


versions = st.sampled_from(["current", "current", "current", "stale", "missing", "garbage"])

json_request = st.sampled_from(WRITE_PATHS).flatmap(
    lambda path: st.tuples(st.just(path), body_for(path), versions).map(lambda t: ("json",) + t))
raw_request = st.tuples(
    st.just("raw"), st.sampled_from(WRITE_PATHS),
    st.one_of(st.binary(max_size=200), st.just(b"[" * 8000), st.just(b'{"version": NaN}'),
              st.just(b'{"dice": [1e999, 1, 1, 1, 1]}'), st.just("\ud800".encode("utf-8", "surrogatepass"))),
    st.sampled_from(["application/json", "text/plain", "application/json; charset=latin-1"]))
read_request = st.tuples(st.just("get"), st.sampled_from(
    ["/api/state", "/api/games", "/api/games/1", "/api/games/99999999999999999999", "/api/events/x",
     "/api/camera/still.jpg"]))
requests = st.one_of(json_request, json_request, raw_request, read_request)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(requests, min_size=1, max_size=25))
def test_no_request_sequence_breaks_the_api_or_the_game(sequence):
    with tempfile.TemporaryDirectory() as data_dir:
        app = table_app(data_dir, advisor=built_advisor())
        http = app.test_client()
        headers = {"Origin": "http://localhost"}
        try:
            state = http.get("/api/state").get_json()
            for request in sequence:
                if request[0] == "get":
                    response = http.get(request[1])
                elif request[0] == "raw":
                    _, path, data, content_type = request
                    response = http.post(path, data=data, content_type=content_type, headers=headers)
                else:
                    _, path, body, version = request
                    body = dict(body)
                    if version != "missing":
                        body["version"] = {"current": state["version"], "stale": state["version"] - 1,
                                           "garbage": str(state["version"])}[version]
                    response = http.post(path, data=json.dumps(body), content_type="application/json",
                                         headers=headers)
                assert response.status_code < 500, response.get_data(as_text=True)
                after = http.get("/api/state").get_json()
                if request[0] != "get" and response.status_code < 300:
                    assert after["version"] == state["version"] + 1
                else:
                    assert after == state
                if response.status_code >= 400:
                    error = response.get_json()["error"]
                    assert set(error) == error_fields(error["code"])
                if after["game"] is not None:
                    check_game(after["game"])
                state = after
            if state["game"] is not None:
                stored = app.extensions[EXTENSION].table.session.store.load(state["game"]["id"])
                assert stored.view()["sheets"] == state["game"]["sheets"]
        finally:
            shutdown(app)


# --- every endpoint, headers included: one request per example -------------------------------------

# Requests sent in all by the test below (hypothesis examples, one request each); no answer is a 5xx.
FUZZ_REQUESTS = 5000
PIN = "2468"

latin1_text = st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=255, exclude_characters="\r\n"),
                      max_size=40)
header_values = {
    "Host": st.one_of(st.sampled_from(["localhost", "127.0.0.1:8000", "[::1]:8000", "[", "[::1", "]",
                                       "evil.example", "", ":", "localhost:", "LOCALHOST", "a" * 300,
                                       "256.256.256.256", "[zz]:1", "localhost:99999", "xn--", ".."]),
                      latin1_text),
    "Origin": st.one_of(st.sampled_from(["http://localhost", "http://[", "http://[::1", "https://localhost",
                                         "null", "http://localhost:99999", "http://localhost:x", "",
                                         "//localhost", "http://localhost/x", "http://user@localhost",
                                         "file://", "http://%zz"]), latin1_text),
    "X-Table-Pin": st.one_of(st.just(PIN), st.text("0123456789", max_size=14), latin1_text),
    "Content-Type": st.one_of(st.sampled_from(["application/json", "application/json; charset=utf-8",
                                               "application/json; charset=klingon", "text/plain",
                                               "multipart/form-data; boundary=x", "application/json;;",
                                               "application/x-www-form-urlencoded"]), latin1_text),
    "Sec-Fetch-Site": st.sampled_from(["same-origin", "cross-site", "none", "same-site", ""]),
    "Accept-Language": st.one_of(st.sampled_from(["fr-FR,fr;q=0.9", "ht", "sr-Cyrl", "*", "en;q=x"]),
                                 latin1_text),
    "Last-Event-ID": st.one_of(st.integers(-2**70, 2**70).map(str), latin1_text),
    "Cookie": latin1_text,
    "Range": st.sampled_from(["bytes=0-10", "bytes=-5", "bytes=999999-", "bytes=x", "lines=1-2"]),
    "If-None-Match": st.one_of(st.just("*"), latin1_text),
    "If-Modified-Since": st.sampled_from(["Tue, 01 Dec 2026 00:00:00 GMT", "yesterday", "0"]),
    "Accept": st.sampled_from(["*/*", "text/event-stream", "application/json", "image/*;q=x"]),
    "Accept-Encoding": st.sampled_from(["gzip", "br, zstd", "identity;q=0", "x"]),
    "X-Forwarded-For": latin1_text,
}
fuzzed_headers = st.fixed_dictionaries({}, optional=header_values)
remote_addresses = st.sampled_from(["127.0.0.1", "127.0.0.2", "10.0.0.7", "::1", "fe80::1%eth0", ""])
extra_methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "PROPFIND"]
path_values = {
    "int": st.one_of(st.integers(-3, 6), st.integers(2**31, 10**25)).map(str) | latin1_text,
    "path": st.one_of(st.sampled_from(["app.js", "style.css", "i18n/fr.json", "../../etc/passwd",
                                       "%2e%2e/secret", "", "a/" * 50, "nul\x00l"]), latin1_text),
}


FUZZED_TABLES: dict[str, Any] = {}  # name -> app: a table without a PIN and one with, while the test runs


def fuzz_app(data_dir, options: dict):
    return table_app(data_dir, advisor=built_advisor(), **options)


@st.composite
def any_request(draw):
    rules = sorted(FUZZED_TABLES["open"].url_map.iter_rules(), key=lambda rule: rule.rule)
    rule = draw(st.sampled_from(rules))
    path = rule.rule
    for argument in rule.arguments:
        converter = "int" if f"<int:{argument}>" in path else "path"
        value = quote(draw(path_values[converter]), safe="/%")
        path = path.replace(f"<int:{argument}>", value).replace(f"<path:{argument}>", value)
    if draw(st.booleans()):
        path += "?" + quote(draw(latin1_text), safe="=&")
    method = draw(st.sampled_from(sorted(rule.methods - {"OPTIONS"})) | st.sampled_from(extra_methods))
    body = draw(st.one_of(st.none(), json_values.map(lambda value: json.dumps(value).encode()),
                          st.dictionaries(st.sampled_from(["version", "players", "dice", "die", "value",
                                                           "category", "game_id"]), json_values,
                                          max_size=4).map(lambda value: json.dumps(value).encode()),
                          st.binary(max_size=64)))
    return (rule.rule, draw(st.sampled_from(["open", "pin"])), method, path, draw(fuzzed_headers), body,
            draw(remote_addresses))


def test_no_request_to_any_endpoint_with_any_headers_gets_a_5xx(tmp_path):
    for name, options in (("open", {}), ("pin", {"pin": PIN})):
        FUZZED_TABLES[name] = fuzz_app(tmp_path / name, options)
    every_rule = {rule.rule for rule in FUZZED_TABLES["open"].url_map.iter_rules()}
    sent: list[str] = []

    @settings(max_examples=FUZZ_REQUESTS, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(any_request())
    def one_request(case):
        rule, table, method, path, headers, body, remote = case
        app = FUZZED_TABLES[table]
        # Straight into the app, as a server would call it (the test client itself chokes on some
        # Host headers while working out the URL for cookies and redirects).
        environ = EnvironBuilder(path=path, method=method, headers=headers, data=body,
                                 environ_base={"REMOTE_ADDR": remote}).get_environ()
        answer, status, answer_headers = run_wsgi_app(app, environ)
        try:
            code = int(status.split()[0])
            assert code < 500, (case, b"".join(answer)[:500])
            if code >= 400 and answer_headers.get("Content-Type") == "application/json" and method != "HEAD":
                error = json.loads(b"".join(answer))["error"]
                assert set(error) == error_fields(error["code"])
        finally:
            close = getattr(answer, "close", None)
            if close is not None:
                close()  # a live stream is answered, never read to its end
        sent.append(rule)

    try:
        one_request()
    finally:
        for app in FUZZED_TABLES.values():
            shutdown(app)
        FUZZED_TABLES.clear()
    assert len(sent) >= FUZZ_REQUESTS
    assert set(sent) == every_rule, "every endpoint was tried"
