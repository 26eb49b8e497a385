"""The vision bench's zoomed views and changed conditions: the labels follow the dice."""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.labelled import load_folder

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_vision import CONDITIONS, TIMED_FRAME, ZOOM_VIEW, as_settled, as_timed_frame, with_sensor_noise, zoomed  # noqa: E402


@pytest.mark.parametrize("zoom", [0.6, 1.0, 1.7, 2.5])
def test_a_zoomed_view_keeps_the_labels_on_their_dice(zoom):
    kept = 0
    for label in load_folder(REPO / "samples")[:12]:
        image = cv2.imread(str(label.path))
        view, inside = zoomed(image, label, zoom)
        assert view.shape[:2] == (ZOOM_VIEW[1], ZOOM_VIEW[0])
        original = label.boxes_in_pixels(image.shape[1], image.shape[0])
        moved = inside.boxes_in_pixels(*ZOOM_VIEW)
        assert inside.values == tuple(sorted(die.value for die in moved)) and len(moved) <= len(original)
        offsets = None
        for die in moved:
            assert die.width / 2 <= die.x <= ZOOM_VIEW[0] - die.width / 2
            assert die.height / 2 <= die.y <= ZOOM_VIEW[1] - die.height / 2
            # One shift of the whole picture takes every die's label to its place in the view.
            here = {(round(o.x - die.x / zoom, 3), round(o.y - die.y / zoom, 3)) for o in original
                    if o.value == die.value and o.width * zoom == pytest.approx(die.width)}
            offsets = here if offsets is None else offsets & here
            assert offsets
            (left, top), = list(offsets)[:1]
            source = image[int(round(die.y / zoom + top)), int(round(die.x / zoom + left))].astype(int)
            assert np.abs(view[int(round(die.y)), int(round(die.x))].astype(int) - source).max() < 60
        kept += len(moved)
    assert kept > 0


@pytest.mark.parametrize("name", sorted(CONDITIONS))
def test_a_condition_changes_the_picture_the_same_way_each_time_and_keeps_its_frame(name):
    image = cv2.imread(str(REPO / "samples" / "images" / "synth_00000.jpg"))
    changed = CONDITIONS[name](image)
    assert changed.shape == image.shape and changed.dtype == np.uint8
    assert not np.array_equal(changed, image)
    assert np.array_equal(CONDITIONS[name](image), changed)


def test_exposure_conditions_darken_and_brighten():
    image = cv2.imread(str(REPO / "samples" / "images" / "synth_00000.jpg"))
    assert CONDITIONS["dark"](image).mean() < image.mean() < CONDITIONS["bright"](image).mean()


def test_the_source_bench_counts_an_alarm_false_only_away_from_every_labelled_die():
    from bench_sources import Tally, is_table_camera

    from vision.labelled import LabelledDie, LabelledImage
    from vision.reading import Die, Problem, ProblemKind, Reading

    dice = (LabelledDie(3, 0.25, 0.5, 0.1, 0.1), LabelledDie(5, 0.75, 0.5, 0.1, 0.1))
    label = LabelledImage(Path("x.jpg"), (3, 5), "ok", dice)
    reading = Reading((Die(3, 100, 200, 40, 0, 0.9), Die(None, 300, 200, 40, 0, 0.0)), "unsure", (
        Problem("the die at (300, 200) could not be read", ProblemKind.UNREADABLE, where=(300, 200)),
        Problem("something at (20, 20) may be a die", ProblemKind.MAYBE_DIE, where=(20, 20)),
    ))
    tally = Tally()
    tally.add(reading, label, 400, 400)
    assert (tally.photos, tally.exact, tally.unsure, tally.dice, tally.dice_right) == (1, 0, 1, 2, 1)
    assert tally.on_a_die == {ProblemKind.UNREADABLE: 1} and tally.false_alarm == {ProblemKind.MAYBE_DIE: 1}
    # A die leaning on the wall is labelled by its top face; its body, found, shows beside it.
    beside, between = Reading((), "unsure", (
        Problem("the die at (335, 200) could not be read", ProblemKind.UNREADABLE, where=(335, 200)),
    )), Reading((), "unsure", (
        Problem("the die at (200, 200) could not be read", ProblemKind.UNREADABLE, where=(200, 200)),
    ))
    tally = Tally()
    tally.add(beside, label, 400, 400)
    tally.add(between, label, 400, 400)
    assert tally.on_a_die == {ProblemKind.UNREADABLE: 1} and tally.false_alarm == {ProblemKind.UNREADABLE: 1}
    assert is_table_camera(label, 400, 400) and not is_table_camera(label, 200, 200)  # dice of 40 px, then 20


def test_the_source_bench_counts_an_alarm_beside_a_die_read_anyway_as_false():
    """A die's shadow or side face found again beside it and asked about is no die the player must
    tap: the die it lies by was read. An alarm is true only by a labelled die left without a value."""
    from bench_sources import Tally

    from vision.labelled import LabelledDie, LabelledImage
    from vision.reading import Die, Problem, ProblemKind, Reading

    label = LabelledImage(Path("x.jpg"), (3, 5), "ok", (LabelledDie(3, 0.25, 0.5, 0.1, 0.1),
                                                        LabelledDie(5, 0.75, 0.5, 0.1, 0.1)))
    shadow = Problem("the die at (130, 210) could not be read", ProblemKind.UNREADABLE, where=(130, 210))
    tally = Tally()
    for five in (5, None):
        dice = (Die(3, 100, 200, 40, 0, 0.9), Die(None, 130, 210, 40, 0, 0.0), Die(five, 300, 200, 40, 0, 0.9))
        tally.add(Reading(dice, "unsure", (shadow,)), label, 400, 400)
    assert tally.false_alarm == {ProblemKind.UNREADABLE: 2} and tally.on_a_die == {}
    # the same alarm where the three beside it is left unread is on that die
    tally = Tally()
    tally.add(Reading((Die(None, 100, 200, 40, 0, 0.0), Die(5, 300, 200, 40, 0, 0.9)), "unsure", (shadow,)),
              label, 400, 400)
    assert tally.on_a_die == {ProblemKind.UNREADABLE: 1} and tally.false_alarm == {}


def test_the_source_bench_counts_an_alarm_on_a_die_leaning_on_one_read_as_true():
    """A die cocked on another is labelled by its top face, near the other's: the die read for that
    other one does not make the cocked one read."""
    from bench_sources import Tally

    from vision.labelled import LabelledDie, LabelledImage
    from vision.reading import Die, Problem, ProblemKind, Reading

    label = LabelledImage(Path("x.jpg"), (2, 3), "unsure", (LabelledDie(2, 0.25, 0.5, 0.1, 0.1),
                                                            LabelledDie(3, 0.3, 0.52, 0.1, 0.1)))
    cocked = Problem("the die at (120, 208) could not be read", ProblemKind.UNREADABLE, where=(120, 208))
    tally = Tally()
    tally.add(Reading((Die(2, 100, 200, 40, 0, 0.9), Die(None, 120, 208, 40, 0, 0.0)), "unsure", (cocked,)),
              label, 400, 400)
    assert tally.on_a_die == {ProblemKind.UNREADABLE: 1} and tally.false_alarm == {}


def test_the_source_bench_gives_each_alarms_precision_over_every_alarm_raised():
    """Precision is per alarm, the tap a player is asked for: of the alarms of a kind raised, the share on
    a labelled die left without a value. A photo with one true and one false alarm counts both."""
    from bench_sources import Tally

    from vision.labelled import LabelledDie, LabelledImage
    from vision.reading import Die, Problem, ProblemKind, Reading

    label = LabelledImage(Path("x.jpg"), (3, 5), "ok", (LabelledDie(3, 0.25, 0.5, 0.1, 0.1),
                                                        LabelledDie(5, 0.75, 0.5, 0.1, 0.1)))
    on_the_three = Problem("the die at (100, 200) could not be read", ProblemKind.UNREADABLE, where=(100, 200))
    on_bare_floor = Problem("the die at (200, 50) could not be read", ProblemKind.UNREADABLE, where=(200, 50))
    five_read = Die(5, 300, 200, 40, 0, 0.9)
    tally = Tally()
    tally.add(Reading((Die(None, 100, 200, 40, 0, 0.0), Die(None, 200, 50, 40, 0, 0.0), five_read), "unsure",
                      (on_the_three, on_bare_floor)), label, 400, 400)
    tally.add(Reading((Die(None, 100, 200, 40, 0, 0.0), five_read), "unsure", (on_the_three,)), label, 400, 400)
    tally.add(Reading((Die(3, 100, 200, 40, 0, 0.9), five_read), "ok"), label, 400, 400)
    assert tally.precision(ProblemKind.UNREADABLE) == pytest.approx(2 / 3)
    assert tally.precision(ProblemKind.MAYBE_DIE) is None  # never raised: no figure, not 0 or 100 %
    assert "unreadable  33.3% false,  66.7% on a die, precision 66.7% of 3" in tally.line("all")
    assert "maybe_die   0.0% false,   0.0% on a die, none raised" in tally.line("all")


def test_the_source_bench_counts_a_wrong_roll_the_table_would_take_apart_from_a_die_missed():
    from bench_sources import Tally

    from vision.labelled import LabelledImage
    from vision.reading import Die, Reading

    label = LabelledImage(Path("x.jpg"), (1, 2, 3, 4, 5), "ok", None)
    five_one_wrong = Reading(tuple(Die(value, 50 * value, 100, 40, 0, 0.9) for value in (1, 2, 3, 4, 6)), "ok")
    four_read = Reading(tuple(Die(value, 50 * value, 100, 40, 0, 0.9) for value in (1, 2, 3, 4)), "ok")
    tally = Tally()
    for reading in (five_one_wrong, four_read):
        tally.add(reading, label, 400, 400)
    assert (tally.silent_wrong, tally.accepted_wrong) == (2, 1)
    assert "silent-wrong 100.0% (2), five taken wrong  50.0% (1)" in tally.line("all")


@pytest.mark.parametrize(("source", "part"), [("epanemu-d6", "few dice, steep"), ("some-tray", "table camera")])
def test_a_steep_sources_few_dice_photos_are_reported_apart_from_table_camera_ones(tmp_path, source, part):
    import shutil

    from bench_sources import bench_source

    from vision.reader import default_reader

    folder = tmp_path / source
    (folder / "images").mkdir(parents=True)
    (folder / "labels").mkdir()
    shutil.copy(REPO / "samples" / "images" / "synth_00002.jpg", folder / "images")
    shutil.copy(REPO / "samples" / "labels" / "synth_00002.txt", folder / "labels")
    (folder / "manifest.csv").write_text("image,values,status\nsynth_00002.jpg,1-3-3-5-5,ok\n")
    tallies = bench_source(folder, default_reader(), None, None)
    assert tallies[part].photos == 1 and tallies["the rest"].photos == 0 and tallies["all"].photos == 1


def test_the_source_bench_counts_a_picture_labelled_unsure_right_only_when_read_unsure():
    """A cocked die's top face is labelled, but the table must not take it as a clean value."""
    from bench_sources import Tally

    from vision.labelled import LabelledImage
    from vision.reading import Die, Problem, ProblemKind, Reading

    label = LabelledImage(Path("x_cocked.jpg"), (1, 2, 3, 4, 5), "unsure", None)
    dice = tuple(Die(value, 50 * value, 100, 40, 0, 0.9) for value in (1, 2, 3, 4, 5))
    tally = Tally()
    doubt = (Problem("the die at (150, 100) may be misread", ProblemKind.DOUBTFUL, where=(150, 100)),)
    for reading in (Reading(dice, "ok"), Reading(dice, "unsure", doubt)):
        tally.add(reading, label, 400, 400)
    assert (tally.exact, tally.silent_wrong, tally.accepted_wrong, tally.unsure) == (1, 1, 1, 1)
    assert "labelled unsure 2, called unsure 1" in tally.line("all")


def test_the_settled_mean_of_noisy_frames_is_nearer_the_scene_than_one_of_them():
    image = cv2.imread(str(REPO / "samples" / "images" / "synth_00000.jpg"))

    def off(picture: np.ndarray) -> float:
        return float(np.abs(picture.astype(float) - image.astype(float)).mean())

    assert off(as_settled(image, 9)) < 0.5 * off(with_sensor_noise(image))


@pytest.mark.parametrize("size", [(1280, 720), (640, 640), (640, 480), (2304, 1296)])
def test_a_frame_timed_is_the_table_cameras_size_and_a_square_die_stays_square(size):
    width, height = size
    picture = np.zeros((height, width, 3), np.uint8)
    side = height // 8
    top, left = height // 2 - side // 2, width // 2 - side // 2
    picture[top:top + side, left:left + side] = 255  # a square die in the middle
    frame = as_timed_frame(picture)
    assert frame.shape[:2] == (TIMED_FRAME[1], TIMED_FRAME[0])
    rows, columns = np.nonzero(frame[:, :, 0] > 127)
    assert np.ptp(columns) == pytest.approx(np.ptp(rows), abs=2)


def test_the_source_bench_gives_each_pictures_verdict():
    from bench_sources import Tally

    from vision.labelled import LabelledImage
    from vision.reading import Die, Problem, ProblemKind, Reading

    label = LabelledImage(Path("x.jpg"), (1, 2, 3, 4, 5), "ok", None)
    unread = (Problem("the die at (250, 100) could not be read", ProblemKind.UNREADABLE, where=(250, 100)),)
    right = tuple(Die(value, 50 * value, 100, 40, 0, 0.9) for value in (1, 2, 3, 4, 5))
    wrong = tuple(Die(value, 50 * value, 100, 40, 0, 0.9) for value in (1, 2, 3, 4, 6))
    tally = Tally()
    verdicts = [tally.add(reading, label, 400, 400)
                for reading in (Reading(right, "ok"), Reading(wrong, "ok"), Reading(right[:4], "unsure", unread))]
    assert verdicts == ["exact", "silent-wrong", "unsure"]


def test_a_saved_source_bench_run_tells_which_pictures_another_reads_otherwise(tmp_path, capsys):
    """Each rule is weighed picture by picture over every source: --save one run, --against it the next."""
    import json
    import shutil

    from bench_sources import main

    folder = tmp_path / "some-tray"
    (folder / "images").mkdir(parents=True)
    (folder / "labels").mkdir()
    for name in ("synth_00002", "synth_00003"):
        shutil.copy(REPO / "samples" / "images" / f"{name}.jpg", folder / "images")
        shutil.copy(REPO / "samples" / "labels" / f"{name}.txt", folder / "labels")
    (folder / "manifest.csv").write_text("image,values,status\nsynth_00002.jpg,1-3-3-5-5,ok\n"
                                         "synth_00003.jpg,1-2-4-5-6,ok\n")
    saved = tmp_path / "before.jsonl"
    main(["--datasets", str(tmp_path), "--sources", "some-tray", "--save", str(saved)])
    rows = [json.loads(line) for line in saved.read_text().splitlines()]
    assert [(row["source"], row["picture"], row["verdict"]) for row in rows] == [
        ("some-tray", "synth_00002.jpg", "exact"), ("some-tray", "synth_00003.jpg", "exact")]
    capsys.readouterr()
    main(["--datasets", str(tmp_path), "--sources", "some-tray", "--against", str(saved)])
    assert capsys.readouterr().out.endswith("some-tray: 2 pictures, exact 2 -> 2, silent-wrong 0 -> 0\n")
    rows[0].update(verdict="unsure", status="unsure", values=[1, 3, 5, 5])  # as a stricter rule would read it
    saved.write_text("".join(json.dumps(row) + "\n" for row in rows))
    main(["--datasets", str(tmp_path), "--sources", "some-tray", "--against", str(saved)])
    out = capsys.readouterr().out
    assert ("  some-tray synth_00002.jpg: unsure -> exact  unsure [1, 3, 5, 5] -> ok [1, 3, 3, 5, 5]\n"
            "some-tray: 2 pictures, exact 1 -> 2, silent-wrong 0 -> 0\n") in out
