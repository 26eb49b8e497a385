"""The demo camera throws only when asked: by the tablet's Throw button or the table's button."""

from __future__ import annotations

import json
import time

import pytest
from table_helpers import TableClient, built_advisor, shutdown, table_app, table_engine

from hardware.camera import ReplayCamera, ThrowRequests, demo_samples_dir, list_images, open_camera
from scorer.actions import Hold
from webui.app import EXTENSION
from webui.engine import NotADemoError
from webui.engine.actions import NewGame


def test_a_demo_camera_shows_an_empty_tray_until_a_throw_is_asked_then_holds_each_throw():
    throws = ThrowRequests()
    camera = ReplayCamera(demo_samples_dir(), throws=throws, fps=1000)
    empty = [camera.read().image for _ in range(20)]
    assert all((picture == empty[0]).all() for picture in empty)  # nothing thrown by itself
    throws.request()
    first = [camera.read().image for _ in range(20)]
    assert all((picture == first[0]).all() for picture in first)  # the throw lies still
    assert not (first[0].shape == empty[0].shape and (first[0] == empty[0]).all())
    throws.request()
    second = camera.read().image
    assert not (second.shape == first[0].shape and (second == first[0]).all())
    assert len(list_images(demo_samples_dir())) > 2


def test_only_a_folder_of_pictures_throws_one_at_a_time(tmp_path):
    sequence = demo_samples_dir() / "sequences" / "single_throw"
    with pytest.raises(Exception, match="no folder of pictures to throw one at a time"):
        ReplayCamera(sequence, throws=ThrowRequests())
    demo = open_camera("demo", throws=ThrowRequests())
    assert demo.source == "demo" and demo.throws is not None


def test_the_engine_throws_for_the_demo_camera_and_its_button_too(tmp_path):
    engine = table_engine(tmp_path, camera="demo", start=False)
    try:
        assert json.loads(engine.table.state_json())["camera"]["demo"]
        engine.throw()
        assert engine.demo_throws is not None and engine.demo_throws.count == 1

        class Panel:  # hardware.gpio.TablePanel's two hooks
            def on_read_request(self, listener):
                self.press = listener

            def set_light(self, on):
                pass

        panel = Panel()
        engine.attach_panel(panel)
        panel.press()
        assert engine.demo_throws.count == 2
    finally:
        engine.close()


def test_a_real_camera_is_not_thrown_from_the_tablet(tmp_path):
    engine = table_engine(tmp_path, camera="off", start=False)
    try:
        assert not json.loads(engine.table.state_json())["camera"]["demo"]
        with pytest.raises(NotADemoError):
            engine.throw()
    finally:
        engine.close()
    app = table_app(tmp_path / "api")
    try:
        client = TableClient(app)
        response = client.post("/api/throw", {})
        assert response.status_code == 409 and response.get_json()["error"]["code"] == "not_a_demo"
    finally:
        shutdown(app)


def test_the_api_throws_the_demo_camera(tmp_path):
    app = table_app(tmp_path, camera="demo", start=False)
    try:
        client = TableClient(app)
        assert client.state()["camera"]["demo"] is True
        response = client.post("/api/throw", {})
        assert response.status_code == 202
        assert app.extensions[EXTENSION].demo_throws.count == 1
    finally:
        shutdown(app)


def test_an_empty_tray_is_no_throw(tmp_path):
    from vision.reading import Reading

    engine = table_engine(tmp_path, camera="demo", start=False)
    try:
        engine.table.camera_reading(Reading(dice=(), status="ok", problems=()))
        camera = json.loads(engine.table.state_json())["camera"]
        assert (camera["status"], camera["notes"], camera["reading_counted"]) == ("live", [], False)
    finally:
        engine.close()


def test_the_demo_throws_only_the_dice_not_held_and_the_held_ones_stay(tmp_path):
    # The demo's samples are throws of five dice; with dice held it must throw only the others, or a
    # demo table could never keep a die (five dice seen are told apart by place, holds aside).
    engine = table_engine(tmp_path, camera="demo", advisor=built_advisor())
    table = engine.table

    def game_when(ready) -> dict:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = json.loads(table.state_json())
            if ready(state):
                return state["game"]
            time.sleep(0.05)
        raise AssertionError(f"the demo's throw never made the roll: {table.state_json()[:600]}")

    try:
        table.apply(table.version, NewGame(["Ana"]))
        engine.throw()
        first = game_when(lambda state: state["game"]["roll_number"] == 1)["dice"]
        table.apply(table.version, Hold([0, 3]))
        engine.throw()
        game = game_when(lambda state: state["game"]["roll_number"] == 2)
        assert [game["dice"][0], game["dice"][3]] == [first[0], first[3]]
        assert game["history"] == [] and game["dice_confidence"][0] is None  # held out of view
        assert table.session.game is not None and tuple(table.session.game.actions[-1].held) == (0, 3)
    finally:
        engine.close()


def test_a_demo_camera_throws_a_picture_of_as_many_dice_as_asked():
    throws = ThrowRequests()
    camera = open_camera("demo", throws=throws, fps=1000)
    empty = camera.read().image
    manifest = {row.split(",")[0]: row.split(",")[1] for row in
                (demo_samples_dir() / "manifest.csv").read_text().splitlines()[1:]}
    for dice in (5, 3, 1, 4, 2, 5):
        throws.request(dice)
        picture = camera.read().image
        matches = [name for name, values in manifest.items()
                   if len(values.split("-")) == dice and _same_picture(picture, demo_samples_dir() / "images" / name)]
        assert matches, f"no sample of {dice} dice shown"
    throws.request(0)  # every die held: nothing is thrown
    assert (camera.read().image == empty).all()


def _same_picture(picture, path) -> bool:
    import cv2

    from hardware.camera import camera_picture

    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    assert image is not None, path
    sample = camera_picture(image, str(path))
    return sample.shape == picture.shape and bool((sample == picture).all())


def test_a_demo_throw_with_every_die_held_is_refused_saying_why(tmp_path):
    # Nothing would be thrown: the tray would show no dice and the tablet nothing at all.
    app = table_app(tmp_path, camera="demo", start=False)
    try:
        client = TableClient(app)
        client.new_game(["Ana"])
        client.post("/api/roll", {"dice": [6, 6, 6, 6, 5]})
        client.post("/api/hold", {"positions": [0, 1, 2, 3, 4]})
        response = client.post("/api/throw", {})
        assert response.status_code == 409 and response.get_json()["error"]["code"] == "all_held"
        assert "held" in response.get_json()["error"]["message"]
        assert app.extensions[EXTENSION].demo_throws.count == 0
        app.extensions[EXTENSION]._button_throw()  # the table's button does nothing either, quietly
        assert app.extensions[EXTENSION].demo_throws.count == 0
        client.post("/api/hold", {"positions": [0, 1, 2, 3]})
        assert client.post("/api/throw", {}).status_code == 202
    finally:
        shutdown(app)
