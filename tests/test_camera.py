"""Camera sources: replay of folders and videos, webcam-style capture, source strings, auto fallback."""

from __future__ import annotations

import json
import shutil

import cv2
import numpy as np
import pytest

from hardware import camera as camera_module
from hardware.camera import (
    CameraDisconnected,
    CameraTimeout,
    CameraUnavailable,
    ReplayCamera,
    SourceSpec,
    VideoCaptureCamera,
    open_camera,
    parse_source,
)
from hardware.fake_camera import FakeCamera, blank_image


def coloured(value: int, width: int = 32, height: int = 24) -> np.ndarray:
    image = np.zeros((height, width, 3), dtype=np.uint8)
    image[:, :, 0] = value
    image[:, :, 2] = 255 - value
    return image


@pytest.fixture
def image_folder(tmp_path):
    folder = tmp_path / "throw"
    folder.mkdir()
    for number, value in enumerate((10, 90, 170)):
        cv2.imwrite(str(folder / f"frame_{number:03d}.png"), coloured(value))
    return folder


@pytest.fixture
def video_file(tmp_path):
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (32, 24))
    assert writer.isOpened()
    for value in (0, 120, 240, 60):
        writer.write(np.full((24, 32, 3), value, dtype=np.uint8))
    writer.release()
    return path


def test_replay_folder_plays_images_in_name_order_and_loops(image_folder):
    with open_camera(f"replay:{image_folder}", fps=1000) as camera:
        frames = [camera.read() for _ in range(7)]
    blues = [int(frame.image[0, 0, 0]) for frame in frames]
    assert blues == [10, 90, 170, 10, 90, 170, 10]
    assert [frame.index for frame in frames] == list(range(7))
    assert all(frame.image.dtype == np.uint8 and frame.image.shape == (24, 32, 3) for frame in frames)
    assert all(a.timestamp < b.timestamp for a, b in zip(frames, frames[1:]))


def test_replay_holds_each_image_for_hold_frames(image_folder):
    camera = ReplayCamera(image_folder, fps=1000, hold=3)
    blues = [int(camera.read().image[0, 0, 0]) for _ in range(7)]
    assert blues == [10, 10, 10, 90, 90, 90, 170]


def test_replay_without_loop_ends_with_disconnect(image_folder):
    camera = ReplayCamera(image_folder, fps=1000, loop=False)
    for _ in range(3):
        camera.read()
    with pytest.raises(CameraDisconnected, match="last image"):
        camera.read()


def test_replay_paces_frames_at_the_set_rate(image_folder):
    now = [100.0]
    slept = []

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds

    camera = ReplayCamera(image_folder, fps=4, clock=lambda: now[0], sleep=sleep)
    stamps = [camera.read().timestamp for _ in range(4)]
    assert stamps == [100.0, 100.25, 100.5, 100.75]
    assert slept == [0.25, 0.25, 0.25]


def test_replay_read_times_out_when_the_next_frame_is_later_than_the_timeout(image_folder):
    now = [0.0]
    camera = ReplayCamera(image_folder, fps=0.5, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    camera.read()
    with pytest.raises(CameraTimeout):
        camera.read(timeout=1.0)


def test_replay_video_file_loops(video_file):
    camera = open_camera(f"replay:{video_file}", fps=1000)
    greys = [int(camera.read().image[5, 5, 1]) for _ in range(6)]
    camera.close()
    # MJPG is lossy: compare with a tolerance
    assert greys[:4] == pytest.approx([0, 120, 240, 60], abs=6)
    assert greys[4:] == pytest.approx([0, 120], abs=6)


def test_replay_of_missing_or_empty_paths_is_unavailable(tmp_path):
    with pytest.raises(CameraUnavailable, match="does not exist"):
        open_camera(f"replay:{tmp_path / 'nowhere'}")
    with pytest.raises(CameraUnavailable, match="no images"):
        open_camera(f"replay:{tmp_path}")


def test_replay_of_an_unreadable_image_names_the_file(tmp_path):
    (tmp_path / "broken.png").write_bytes(b"not a png")
    camera = ReplayCamera(tmp_path, fps=1000)
    with pytest.raises(camera_module.CameraError, match="broken.png"):
        camera.read()


def test_video_capture_camera_reads_a_file_then_reports_the_end_as_disconnect(video_file):
    camera = VideoCaptureCamera(str(video_file))
    seen = []
    with pytest.raises(CameraDisconnected, match="stopped sending"):
        for _ in range(10):
            seen.append(camera.read(timeout=2.0))
    camera.close()
    # the reader keeps only the newest picture, so it may skip some, but never repeats one
    indexes = [frame.index for frame in seen]
    assert indexes == sorted(set(indexes)) and 1 <= len(indexes) <= 4


def test_video_capture_camera_that_cannot_open_is_unavailable(tmp_path):
    with pytest.raises(CameraUnavailable, match="cannot open"):
        VideoCaptureCamera(str(tmp_path / "missing.avi"))


@pytest.mark.parametrize("text, spec", [
    ("pi", SourceSpec("pi")),
    ("auto", SourceSpec("auto")),
    ("usb:0", SourceSpec("usb", 0)),
    ("usb:12", SourceSpec("usb", 12)),
    ("/dev/video2", SourceSpec("device", "/dev/video2")),
    ("rtsp://table.local/stream", SourceSpec("url", "rtsp://table.local/stream")),
    ("replay:samples", SourceSpec("replay", "samples")),
])
def test_parse_source_accepts_every_documented_form(text, spec):
    assert parse_source(text) == spec


@pytest.mark.parametrize("text", ["usb:", "usb:x", "replay:", "webcam", "", "video0"])
def test_parse_source_refuses_unknown_forms_with_the_accepted_list(text):
    with pytest.raises(ValueError, match="usb:|replay:"):
        parse_source(text)


def test_unknown_options_are_refused(image_folder):
    with pytest.raises(TypeError, match="frame_rate"):
        open_camera(f"replay:{image_folder}", frame_rate=5)


def test_settings_options_are_all_accepted(image_folder, tmp_path):
    from webui.engine.settings import load_settings

    settings = load_settings(env={"XDG_CONFIG_HOME": str(tmp_path)})
    open_camera(f"replay:{image_folder}", **settings.camera_options()).close()


def test_auto_without_a_camera_opens_none_and_says_what_it_tried(monkeypatch, image_folder):
    """A loose ribbon cable must not turn the samples into the players' throws."""
    tried = []

    def unavailable(target, **_):
        tried.append(target)
        raise CameraUnavailable("no webcam")

    monkeypatch.setattr(camera_module, "VideoCaptureCamera", unavailable)
    monkeypatch.setattr(camera_module, "CHECKOUT_SAMPLES", image_folder)
    monkeypatch.setitem(__import__("sys").modules, "picamera2", None)
    with pytest.raises(CameraUnavailable) as caught:
        open_camera("auto")
    message = str(caught.value)
    assert "no camera found" in message and "pi:" in message and "usb:0: no webcam" in message
    assert tried == [0]


def test_auto_keeps_opencvs_warnings_about_missing_webcams_out_of_the_log(monkeypatch, capfd):
    """Tried every few seconds on a table without a camera, a missing webcam is said once, in the
    camera's status, not as two OpenCV warnings on stderr at each try."""
    monkeypatch.setattr(camera_module, "AUTO_SOURCES", ("usb:97",))  # no machine has 98 webcams
    with pytest.raises(CameraUnavailable, match="usb:97: cannot open webcam 97"):
        open_camera("auto")
    assert "WARN" not in capfd.readouterr().err


def test_a_webcam_asked_for_by_name_is_retried_without_opencvs_warnings_either(capfd):
    # The supervisor retries a missing usb:N every few seconds for as long as the table runs, and says
    # why in the camera's status and its log once: OpenCV's own two lines at each try would fill a
    # Pi's journal.
    with pytest.raises(CameraUnavailable, match="cannot open webcam 97"):
        open_camera("usb:97")
    assert "WARN" not in capfd.readouterr().err


def test_demo_replays_the_sample_throws_by_name(monkeypatch, tmp_path, image_folder):
    shutil.copytree(image_folder, tmp_path / "demo" / "images")
    monkeypatch.setattr(camera_module, "CHECKOUT_SAMPLES", tmp_path / "demo")
    camera = open_camera("demo", fps=1000)
    assert isinstance(camera, ReplayCamera) and camera.source == "demo"
    assert camera.image_count == 3
    camera.close()


def test_demo_without_its_samples_says_how_to_get_them(monkeypatch, tmp_path):
    monkeypatch.setattr(camera_module, "CHECKOUT_SAMPLES", tmp_path / "nothing")
    monkeypatch.setattr(camera_module, "SAMPLES_PACKAGE", "no_such_samples_package")
    with pytest.raises(CameraUnavailable, match="replay:PATH/samples"):
        open_camera("demo")


def test_off_is_a_source_with_nothing_to_open():
    assert parse_source("off") == SourceSpec("off")
    with pytest.raises(CameraUnavailable, match="off"):
        open_camera("off")


def test_fake_camera_cycles_images_and_obeys_its_script():
    fake = FakeCamera([blank_image(grey=1), blank_image(grey=2)]).open()
    assert [int(fake.read().image[0, 0, 0]) for _ in range(3)] == [1, 2, 1]
    fake.fail_next()
    with pytest.raises(camera_module.CameraError, match="scripted"):
        fake.read()
    fake.stall()
    with pytest.raises(CameraTimeout):
        fake.read(timeout=0.05)
    fake.resume()
    fake.read()
    fake.unplug()
    with pytest.raises(CameraDisconnected):
        fake.read()
    with pytest.raises(CameraUnavailable):
        fake.open()
    fake.plug_in()
    assert fake.open().read().image.shape == (48, 64, 3)


def test_frames_are_three_channel_uint8_whatever_the_picture(tmp_path):
    cv2.imwrite(str(tmp_path / "grey.png"), np.full((10, 12), 77, dtype=np.uint8))
    frame = ReplayCamera(tmp_path, fps=1000).read()
    assert frame.image.shape == (10, 12, 3) and frame.image.dtype == np.uint8


def write_sequence(folder, values, fps=10.0):
    folder.mkdir(parents=True)
    names = []
    for number, value in enumerate(values):
        names.append(f"{number:03d}.png")
        cv2.imwrite(str(folder / names[-1]), coloured(value))
    (folder / "sequence.json").write_text(json.dumps({"name": folder.name, "fps": fps, "frames": names}))
    return folder


def test_a_throw_sequence_plays_its_frames_at_its_own_rate(tmp_path):
    folder = write_sequence(tmp_path / "single_throw", [0, 50, 100, 100, 100], fps=10.0)
    now = [0.0]
    camera = ReplayCamera(folder, fps=2, hold=8, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    frames = [camera.read() for _ in range(6)]
    assert [int(f.image[0, 0, 0]) for f in frames] == [0, 50, 100, 100, 100, 0]
    assert [f.timestamp for f in frames] == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4, 0.5])


def test_a_folder_replay_leaves_sequences_out(tmp_path):
    cv2.imwrite(str(tmp_path / "still.png"), coloured(200))
    write_sequence(tmp_path / "sequences" / "two_throws", [0, 50])
    camera = ReplayCamera(tmp_path, fps=1000)
    assert camera.image_count == 1


def test_a_broken_sequence_description_is_reported(tmp_path):
    folder = write_sequence(tmp_path / "throw", [0, 50])
    (folder / "001.png").unlink()
    with pytest.raises(CameraUnavailable, match="missing frames 001.png"):
        ReplayCamera(folder)
    (folder / "sequence.json").write_text("{not json")
    with pytest.raises(CameraUnavailable, match="cannot use sequence"):
        ReplayCamera(folder)


def test_the_repository_samples_replay_as_stills_and_as_throw_sequences():
    samples = camera_module.CHECKOUT_SAMPLES
    if not (samples / "sequences").is_dir():
        pytest.skip(f"no throw sequences in {samples}: generate them with python -m vision.synth --sequences")
    stills = ReplayCamera(samples, fps=1000)
    assert stills.image_count == len(list((samples / "images").glob("*.jpg")))
    stills.close()
    for folder in sorted(p for p in (samples / "sequences").iterdir() if p.is_dir()):
        description = json.loads((folder / "sequence.json").read_text())
        camera = ReplayCamera(folder)
        assert camera.image_count == len(description["frames"])
        assert camera.fps == description["fps"] and camera.hold == 1
        assert camera.read().image.ndim == 3
        camera.close()


def test_replay_skips_an_unreadable_image_says_which_and_goes_on(image_folder, caplog):
    (image_folder / "b-broken.png").write_bytes(b"not a png")  # sorts first
    camera = ReplayCamera(image_folder, fps=1000)
    with caplog.at_level("WARNING", logger="hardware.camera"):
        blues = [int(camera.read().image[0, 0, 0]) for _ in range(7)]
    assert blues == [10, 90, 170, 10, 90, 170, 10]  # every readable picture, in order, looping
    warnings = [record.getMessage() for record in caplog.records]
    assert len(warnings) == 1 and "b-broken.png" in warnings[0]  # said once, then left out
    assert camera.image_count == 3


def test_a_demo_throw_skips_an_unreadable_picture_too(image_folder, caplog):
    (image_folder / "frame_000b.png").write_bytes(b"not a png")  # between the first two throws
    throws = camera_module.ThrowRequests()
    camera = ReplayCamera(image_folder, fps=1000, throws=throws)
    blues = []
    with caplog.at_level("WARNING", logger="hardware.camera"):
        for _ in range(4):
            throws.request()
            blues.append(int(camera.read().image[0, 0, 0]))
    assert blues == [10, 90, 170, 10]
    assert any("frame_000b.png" in record.getMessage() for record in caplog.records)
