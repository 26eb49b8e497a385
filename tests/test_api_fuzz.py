"""Property: whatever a tablet, a script or an attacker sends, the API answers without a 500, a
refusal changes nothing, an acceptance moves the version by one, the game stays consistent, and
what is on disk replays to what is in memory."""

from __future__ import annotations

import json
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from table_helpers import built_advisor, check_game, error_fields, shutdown, table_app

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
