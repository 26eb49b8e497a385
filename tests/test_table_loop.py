"""The table loop, driven directly (no HTTP): frames in, settled throws read, rolls into the game,
the camera's status out."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np
import pytest
from table_helpers import built_advisor, table_engine

from hardware.fake_camera import FakeCamera
from scorer import CATEGORIES, score
from scorer.actions import Record, Roll, Undo
from vision import read_dice
from vision.reading import Die, Problem, Reading
from webui.engine import CorrectDie, NewGame
from webui.engine.loop import same_throw

SEQUENCES = Path(__file__).resolve().parent.parent / "samples" / "sequences"


def tray(seed: int, dice_at: Sequence[tuple[int, int]] = (), width: int = 320, height: int = 240) -> np.ndarray:
    """A felt-green tray with white squares where dice lie: enough for the settle detector."""
    rng = np.random.default_rng(seed)
    felt = np.full((height, width, 3), (40, 110, 50), np.uint8)
    image = cv2.add(felt, rng.integers(0, 3, felt.shape, dtype=np.uint8))
    for x, y in dice_at:
        cv2.rectangle(image, (x - 12, y - 12), (x + 12, y + 12), (235, 235, 235), -1)
    return image


def frame(image: np.ndarray, t: float) -> SimpleNamespace:
    return SimpleNamespace(image=image, timestamp=t)


def reading(values, status="ok", problems=(), xs=(40, 100, 160, 220, 280), y=100.0) -> Reading:
    """Dice in a row at height `y`: a throw after another lies elsewhere (a die lying where one lay
    before, showing the same face, was kept)."""
    dice = tuple(Die(value=v, x=float(x), y=y, size=24.0, angle=0.0, confidence=0.9)
                 for v, x in zip(values, xs))
    return Reading(dice=dice, status=status, problems=tuple(problems))


class ScriptedReader:
    """Hands out the given readings in order, one per settled throw the loop asks to read."""

    def __init__(self, readings):
        self.readings = list(readings)
        self.asked = 0

    def __call__(self, image):
        self.asked += 1
        return self.readings.pop(0)


def annotate_copy(image, reading):
    return image.copy()


class Player:
    """Taps on a tablet, made straight to the table: each action against the current version."""

    def __init__(self, engine):
        self.engine = engine
        self.table = engine.table

    def state(self) -> dict:
        return json.loads(self.table.state_json())

    def new_game(self, players) -> dict:
        return self.play(NewGame(list(players)))

    def play(self, action) -> dict:
        self.table.apply(self.table.version, action)
        return self.state()


@pytest.fixture
def table(tmp_path):
    """A table with a camera whose loop is driven by hand (loop.process), not by a thread."""
    made = []

    def make(read_dice=None, annotate=None):
        engine = table_engine(tmp_path, advisor=built_advisor(), camera="replay:test",
                              open_camera=FakeCamera().open, start=False,
                              loop_options={"read_dice": read_dice, "annotate": annotate})
        made.append(engine)
        return engine, engine.loop, Player(engine)

    yield make
    for engine in made:
        engine.close()


def throw(loop, t: float, seed: int, dice_at) -> float:
    """Dice tumbling for half a second, then at rest for a second; returns the time after."""
    for step in range(5):
        loop.process(frame(tray(seed * 100 + step, [(x + 7 * step, y) for x, y in dice_at]), t))
        t += 0.1
    resting = tray(seed * 100 + 50, dice_at)
    for _ in range(10):
        loop.process(frame(resting, t))
        t += 0.1
    return t


PLACES = [[(40 + 50 * i, 60 + 20 * i) for i in range(5)], [(60 + 45 * i, 180 - 25 * i) for i in range(5)],
          [(30 + 60 * i, 120) for i in range(5)], [(50 + 50 * i, 40 + 35 * i) for i in range(5)]]


def test_each_settled_throw_is_one_roll_and_a_fourth_is_shown_not_counted(table):
    rolls = [[1, 2, 3, 4, 4], [4, 4, 4, 2, 6], [4, 4, 4, 4, 1], [6, 6, 6, 6, 6]]
    reader = ScriptedReader(reading(values, y=40.0 + 50 * i) for i, values in enumerate(rolls))
    engine, loop, client = table(read_dice=reader, annotate=annotate_copy)
    client.new_game(["Ana", "Ben"])
    t = 0.0
    for number, (values, places) in enumerate(zip(rolls[:3], PLACES), start=1):
        t = throw(loop, t, number, places)
        game = client.state()["game"]
        assert reader.asked == number  # read once per throw, not once per frame
        assert game["roll_number"] == number and game["dice"] == values
        assert game["dice_source"] == "camera" and game["dice_confidence"] == [0.9] * 5
    t = throw(loop, t, 4, PLACES[3])
    state = client.state()
    assert state["game"]["roll_number"] == 3 and state["game"]["dice"] == rolls[2]
    assert state["camera"]["reading"]["values"] == [6, 6, 6, 6, 6]
    assert state["camera"]["reading_counted"] is False
    assert "category" in state["camera"]["message"]
    assert state["camera"]["notes"] == [{"code": "rolls_used", "name": "Ana"}]

    recorded = client.play(Record("four_of_a_kind"))
    assert recorded["game"]["totals"] == [score(rolls[2], "four_of_a_kind"), 0]
    assert recorded["game"]["current_player_name"] == "Ben"


def test_an_unsure_reading_is_shown_and_waits_for_a_rethrow(table):
    hand = Problem("something that is no die is in the tray near (90, 80) (a hand?)", "foreign")
    unread = [Problem(f"the die at ({x}, 100) could not be read", "unreadable") for x in (40, 100)]
    doubtful = Problem("the die at (160, 100) looks like 3 but not surely", "doubtful", 3)
    reader = ScriptedReader([reading([1, 2, 3, 4], status="unsure",
                                     problems=[hand, *unread, doubtful, "a die is cocked"]),
                             reading([2, 2, 3, 3, 3])])
    engine, loop, client = table(read_dice=reader, annotate=annotate_copy)
    client.new_game(["Ana"])
    t = throw(loop, 0.0, 1, PLACES[0][:4])
    state = client.state()
    assert state["camera"]["status"] == "unsure" and "cocked" in state["camera"]["message"]
    # For the page to word in the player's language: each kind of problem once, where dice are no matter.
    assert state["camera"]["notes"] == [{"code": "foreign"}, {"code": "unreadable"}, {"code": "doubtful", "value": 3},
                                        {"code": "other", "text": "a die is cocked"}]
    assert state["camera"]["reading"]["status"] == "unsure"
    assert state["game"]["roll_number"] == 0
    loop.process(frame(tray(7, PLACES[1]), t))  # dice picked up and thrown again
    assert client.state()["camera"]["status"] == "live" and client.state()["camera"]["notes"] == []
    throw(loop, t + 0.1, 2, PLACES[1])
    assert client.state()["game"]["dice"] == [2, 2, 3, 3, 3]


def test_four_dice_read_surely_are_not_a_turns_first_roll(table):
    engine, loop, client = table(read_dice=ScriptedReader([reading([5, 5, 5, 5])]), annotate=annotate_copy)
    client.new_game(["Ana"])
    throw(loop, 0.0, 1, PLACES[0][:4])
    state = client.state()
    assert state["camera"]["status"] == "unsure"
    assert "first throw is all five dice; 4 seen" in state["camera"]["message"]
    assert state["camera"]["notes"] == [{"code": "first_throw_five", "count": 4}]
    assert state["game"]["roll_number"] == 0


def test_the_same_scene_seen_again_is_not_a_new_roll(table):
    """A light switched on: the picture changes everywhere, the dice do not."""
    engine, loop, client = table(read_dice=ScriptedReader([reading([1, 2, 3, 4, 5])] * 2),
                              annotate=annotate_copy)
    client.new_game(["Ana"])
    t = throw(loop, 0.0, 1, PLACES[0])
    brighter = cv2.add(tray(150, PLACES[0]), np.full((240, 320, 3), 60, np.uint8))
    brighter[:, :160] = cv2.add(brighter[:, :160], np.full((240, 160, 3), 60, np.uint8))
    for step in range(10):
        loop.process(frame(brighter, t + 0.1 * step))
    state = client.state()
    assert state["game"]["roll_number"] == 1
    assert state["camera"]["reading_counted"] is False and "same dice" in state["camera"]["message"]
    assert state["camera"]["notes"] == [{"code": "same_throw"}]


def test_throws_without_a_game_to_count_them_are_shown_with_the_reason(table):
    reader = ScriptedReader([reading([1, 2, 3, 4, 5]), reading([6, 5, 4, 3, 2])])
    engine, loop, client = table(read_dice=reader, annotate=annotate_copy)
    t = throw(loop, 0.0, 1, PLACES[0])
    camera = client.state()["camera"]
    assert camera["reading_counted"] is False and camera["notes"] == [{"code": "no_game"}]
    client.new_game(["Ana"])
    for category in CATEGORIES:
        client.play(Roll([1, 1, 1, 1, 1]))
        client.play(Record(category))
    throw(loop, t, 2, PLACES[1])
    camera = client.state()["camera"]
    assert camera["reading_counted"] is False and camera["notes"] == [{"code": "game_over"}]


def test_a_reader_that_fails_is_shown_and_the_next_throw_is_read(table):
    answers = [reading([1, 2, 3, 4, 5]), RuntimeError("out of memory"), reading([3, 3, 3, 3, 3], y=180.0)]

    def reader(image):
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    engine, loop, client = table(read_dice=reader, annotate=annotate_copy)
    client.new_game(["Ana"])
    t = throw(loop, 0.0, 1, PLACES[0])
    first_picture = engine.still_jpeg()
    t = throw(loop, t, 2, PLACES[1])
    camera = client.state()["camera"]
    assert camera["status"] == "unsure" and "RuntimeError" in camera["message"]
    assert camera["notes"] == [{"code": "read_failed"}]
    # The first throw's reading and picture are no longer what the tray shows: the picture is the
    # frame that could not be read, and no reading stands for the page to fill a roll from.
    assert camera["reading"] is None and camera["reading_counted"] is False
    failed_picture = engine.still_jpeg()
    assert failed_picture != first_picture
    assert cv2.imdecode(np.frombuffer(failed_picture, np.uint8), cv2.IMREAD_COLOR).shape == (240, 320, 3)
    throw(loop, t, 3, PLACES[2])
    assert client.state()["game"]["dice"] == [3, 3, 3, 3, 3]


def test_the_last_reading_is_kept_annotated_and_the_preview_is_published(table):
    engine, loop, client = table(read_dice=ScriptedReader([reading([1, 1, 1, 1, 1])]), annotate=annotate_copy)
    assert engine.still_jpeg() is None
    throw(loop, 0.0, 1, PLACES[0])
    still = engine.still_jpeg()
    assert cv2.imdecode(np.frombuffer(still, np.uint8), cv2.IMREAD_COLOR).shape == (240, 320, 3)
    version, preview = engine.preview.latest()
    assert version > 0 and preview[:2] == b"\xff\xd8"  # a JPEG


def test_repeated_throws_are_told_from_new_ones():
    assert same_throw(reading([1, 2, 3, 4, 5]), reading([1, 2, 3, 4, 5], xs=(45, 95, 165, 215, 285)))
    assert not same_throw(reading([1, 2, 3, 4, 5]), reading([1, 2, 3, 4, 6]))
    assert not same_throw(reading([1, 2, 3, 4, 5]), reading([1, 2, 3, 4, 5], xs=(280, 220, 160, 100, 40)))
    assert not same_throw(None, reading([1, 2, 3, 4, 5]))


def test_a_camera_changing_resolution_restarts_the_settle_detector(table):
    reader = ScriptedReader([reading([2, 2, 2, 2, 2]), reading([4, 4, 4, 4, 4], y=180.0)])
    engine, loop, client = table(read_dice=reader, annotate=annotate_copy)
    client.new_game(["Ana"])
    throw(loop, 0.0, 1, PLACES[0])
    for step in range(6):
        loop.process(frame(cv2.resize(tray(3, PLACES[1]), (640, 480)), 2.0 + 0.1 * step))
    assert reader.asked == 2
    game = client.state()["game"]
    assert game["roll_number"] == 2 and game["dice"] == [4, 4, 4, 4, 4]


def wait_for(client, predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = client.state()
        if predicate(state):
            return state
        time.sleep(0.05)
    raise AssertionError(f"not reached within {timeout} s: {client.state()['camera']}")


def test_a_lost_camera_goes_offline_with_its_reason_and_the_game_goes_on(tmp_path):
    camera = FakeCamera([tray(1, PLACES[0])], frame_interval=0.02)
    engine = table_engine(tmp_path, camera="replay:test", open_camera=camera.open, advisor=built_advisor(),
                          loop_options={"read_dice": ScriptedReader([reading([1, 2, 3, 4, 5])] * 50),
                                        "annotate": annotate_copy})
    client = Player(engine)
    try:
        wait_for(client, lambda s: s["camera"]["status"] == "live" and s["camera"]["reading"] is not None)
        client.new_game(["Ana"])
        camera.unplug()
        started = time.monotonic()
        state = wait_for(client, lambda s: s["camera"]["status"] == "offline")
        assert time.monotonic() - started < 3.0
        assert "unplugged" in state["camera"]["message"] or "not connected" in state["camera"]["message"]
        assert state["game"]["roll_number"] == 0
        rolled = client.play(Roll([6, 6, 6, 6, 6]))
        assert rolled["camera"]["status"] == "offline"
        camera.plug_in()
        state = wait_for(client, lambda s: s["camera"]["status"] == "live", timeout=10)
        assert state["game"]["dice"] == [6, 6, 6, 6, 6]
    finally:
        engine.close()


def test_replayed_throw_sequences_are_read_into_rolls_and_scores(table):
    """End to end with the real reader and settle detector: two generated sequences (one throw, then
    two), frame by frame at their own times, the table restarted between them as after a power cut.
    Every resting scene is read once; each read surely is the next roll with the dice the sequence
    shows at rest; the rest are shown and not counted."""
    calls = []

    def counting_reader(image):
        calls.append(1)
        return read_dice(image)

    readings, rests = [], []
    for name in ("single_throw", "two_throws"):
        folder = SEQUENCES / name
        if not (folder / "sequence.json").is_file():
            pytest.fail(f"{folder} is missing: run python -m vision.synth --out samples --sequences")
        description = json.loads((folder / "sequence.json").read_text())
        rests += description["values_at_rest"]
        engine, loop, client = table(read_dice=counting_reader)
        if client.state()["game"] is None:
            client.new_game(["Ana"])
        for file, t in zip(description["frames"], description["times"]):
            before = len(calls)
            loop.process(frame(cv2.imread(str(folder / file)), t))
            if len(calls) > before:
                readings.append(client.state()["camera"])
    assert len(readings) == len(rests) == 3
    counted = [rest for camera, rest in zip(readings, rests) if camera["reading_counted"]]
    for camera, rest in zip(readings, rests):
        read_surely = camera["reading"]["status"] == "ok" and len(camera["reading"]["values"]) == 5
        assert camera["reading_counted"] == read_surely
        if read_surely:
            assert camera["reading"]["values"] == sorted(rest)
    assert counted, readings  # at least one generated throw read surely, or nothing was tested
    game = client.state()["game"]
    assert game["roll_number"] == len(counted) and sorted(game["dice"]) == sorted(counted[-1])
    assert game["dice_source"] == "camera"
    recorded = client.play(Record("choice"))["game"]
    assert recorded["totals"] == [sum(counted[-1])]


def test_the_table_button_reads_now_and_the_light_follows_the_game(table):
    mock = pytest.importorskip("gpiozero.pins.mock", reason="gpiozero is in the test extra")
    from hardware.gpio import TablePanel

    pins = mock.MockFactory()
    reader = ScriptedReader([reading([3, 3, 3, 3, 3])])
    engine, loop, client = table(read_dice=reader, annotate=annotate_copy)
    with TablePanel(button_pin=17, light_pin=27, pin_factory=pins) as panel:
        engine.attach_panel(panel)
        assert pins.pin(27).state is False
        client.new_game(["Ana"])
        assert pins.pin(27).state is True
        for step, t in enumerate((0.0, 0.1)):  # dice still rocking: no settle yet
            loop.process(frame(tray(step, [(x + 5 * step, y) for x, y in PLACES[0]]), t))
        pins.pin(17).drive_low()
        time.sleep(0.02)
        pins.pin(17).drive_high()
        time.sleep(0.08)
        loop.process(frame(tray(9, PLACES[0]), 0.2))
        assert reader.asked == 1 and client.state()["game"]["dice"] == [3, 3, 3, 3, 3]
        for category in client.state()["categories"]:
            if client.state()["game"]["dice"] is None:
                client.play(Roll([1, 2, 3, 4, 5]))
            client.play(Record(category))
        assert client.state()["game"]["is_over"] and pins.pin(27).state is False


class RecordingReader:
    """Reads every picture it is handed as one roll, keeping the pictures."""

    def __init__(self):
        self.pictures = []

    def __call__(self, image):
        self.pictures.append(image.copy())
        return reading([2, 2, 3, 3, 3])


def noisy(image: np.ndarray, seed: int) -> np.ndarray:
    """The picture as a camera in a dim room sends it: noise of sigma 12 of its own each frame."""
    noise = np.random.default_rng(seed).normal(0, 12, image.shape)
    return np.clip(image + noise, 0, 255).astype(np.uint8)


def test_the_button_reads_the_mean_of_the_frames_since_the_dice_last_moved(table):
    reader = RecordingReader()
    engine, loop, client = table(read_dice=reader, annotate=annotate_copy)
    resting = tray(1, PLACES[0])
    loop.process(frame(noisy(tray(2, [(x + 20, y) for x, y in PLACES[0]]), 0), 0.0))
    loop.process(frame(noisy(resting, 1), 0.1))  # the dice land: this frame may be blurred
    still = [noisy(resting, seed) for seed in (2, 3)]
    loop.process(frame(still[0], 0.2))
    loop.read_now()  # before the settle detector's 0.3 s: a die keeps rocking, say
    loop.process(frame(still[1], 0.3))
    expected = np.round(np.mean(np.stack(still).astype(np.float64), axis=0))
    assert len(reader.pictures) == 1
    assert np.abs(reader.pictures[0].astype(int) - expected.astype(int)).max() <= 1

    loop.process(frame(noisy(tray(3, PLACES[1]), 4), 0.4))  # moved
    loop.read_now()
    moved = noisy(tray(3, PLACES[2]), 5)
    loop.process(frame(moved, 0.5))
    assert np.array_equal(reader.pictures[1], moved)  # nothing still to take a mean of


def test_confidence_belongs_to_the_camera_roll_only(table):
    reader = ScriptedReader([reading([1, 2, 3, 4, 5])])
    engine, loop, client = table(read_dice=reader, annotate=annotate_copy)
    client.new_game(["Ana"])
    throw(loop, 0.0, 1, PLACES[0])
    assert client.state()["game"]["dice_confidence"] == [0.9] * 5
    assert client.play(CorrectDie(0, 6))["game"]["dice_confidence"] is None
    assert client.play(Undo())["game"]["dice_confidence"] == [0.9] * 5
    client.play(Undo())
    manual = client.play(Roll([6, 6, 6, 6, 6]))["game"]
    assert manual["dice_source"] == "manual" and manual["dice_confidence"] is None


def test_a_calibrated_tray_region_is_all_the_reader_looks_at(tmp_path):
    from drawn_dice import draw_die
    from drawn_dice import tray as drawn_tray

    def picture(shift: int) -> np.ndarray:
        image = drawn_tray()
        for index, value in enumerate([1, 2, 3, 4, 5]):
            draw_die(image, value, (150 + 130 * index + shift, 480 - shift), 80, 10 * index + shift)
        draw_die(image, 6, (1150 - shift, 480), 80, shift)  # on the table beside the tray
        return image

    engine = table_engine(tmp_path, camera="replay:test", tray_region=(0, 0, 900, 960),
                          open_camera=FakeCamera().open, advisor=built_advisor(), start=False)
    loop, client = engine.loop, Player(engine)
    try:
        t = 0.0
        for step in range(5):
            loop.process(frame(picture(12 * (5 - step)), t))
            t += 0.1
        for _ in range(10):
            loop.process(frame(picture(0), t))
            t += 0.1
        shown = client.state()["camera"]["reading"]
        assert shown is not None and len(shown["dice"]) == 5
        assert all(die["x"] < 900 for die in shown["dice"])
    finally:
        engine.close()
