"""Camera faults: a silent or unplugged camera is reported offline within 2 s, retried, and picked up again."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hardware.fake_camera import FakeCamera, blank_image
from hardware.supervisor import CameraState, CameraSupervisor, retry_delay


def wait_until(condition, timeout=3.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return time.monotonic()
        time.sleep(0.01)
    raise AssertionError("condition not met in time")


@pytest.fixture
def fake():
    return FakeCamera([blank_image(grey=10), blank_image(grey=20)], frame_interval=0.01)


def supervise(fake, **options):
    options = {"stall_seconds": 0.5, "retry_initial": 0.05, "retry_maximum": 0.2, **options}
    return CameraSupervisor(fake.open, source="fake", **options).start()


def test_frames_flow_and_status_is_live(fake):
    with supervise(fake) as supervisor:
        first = supervisor.wait_for_frame(timeout=2)
        second = supervisor.wait_for_frame(after=first.index, timeout=2)
        assert second.index > first.index
        assert supervisor.status.state == CameraState.LIVE and supervisor.status.frames >= 2
        assert supervisor.status.message == "fake camera"
    assert supervisor.status.state == CameraState.OFF


def test_unplugged_camera_goes_offline_with_reason_and_comes_back(fake):
    with supervise(fake) as supervisor:
        supervisor.wait_for_frame(timeout=2)
        unplugged_at = time.monotonic()
        fake.unplug()
        offline_at = wait_until(lambda: supervisor.status.state == CameraState.OFFLINE)
        assert offline_at - unplugged_at < 2.0
        assert "unplugged" in supervisor.status.message or "not connected" in supervisor.status.message
        assert supervisor.wait_for_frame(timeout=0.1) is None
        opened_while_offline = fake.opened
        time.sleep(0.4)
        assert supervisor.status.state == CameraState.OFFLINE
        fake.plug_in()
        wait_until(lambda: supervisor.status.state == CameraState.LIVE)
        assert fake.opened == opened_while_offline + 1
        assert supervisor.wait_for_frame(timeout=2) is not None


def test_silent_camera_is_offline_within_two_seconds_at_default_stall(fake):
    with supervise(fake, stall_seconds=1.5) as supervisor:
        supervisor.wait_for_frame(timeout=2)
        stalled_at = time.monotonic()
        fake.stall()
        offline_at = wait_until(lambda: supervisor.status.state == CameraState.OFFLINE, timeout=3)
        assert offline_at - stalled_at < 2.0
        assert "no picture" in supervisor.status.message
        fake.resume()
        wait_until(lambda: supervisor.status.state == CameraState.LIVE)


def test_a_camera_missing_at_start_is_retried_with_growing_pauses(fake):
    fake.unplug()
    statuses = []
    supervisor = CameraSupervisor(fake.open, source="fake", stall_seconds=0.5, retry_initial=0.05,
                                  retry_maximum=0.2)
    supervisor.add_status_listener(statuses.append)
    with supervisor.start():
        wait_until(lambda: len([s for s in statuses if s.state == CameraState.OFFLINE]) >= 4)
        fake.plug_in()
        wait_until(lambda: supervisor.status.state == CameraState.LIVE)
    retries = [s.retry_in for s in statuses if s.state == CameraState.OFFLINE]
    assert retries[:4] == [0.05, 0.1, 0.2, 0.2]
    assert all("not connected" in s.message for s in statuses if s.state == CameraState.OFFLINE)
    assert [s.state for s in statuses][-2:] == [CameraState.LIVE, CameraState.OFF]


def test_frame_indexes_keep_increasing_across_reconnections(fake):
    with supervise(fake) as supervisor:
        before = supervisor.wait_for_frame(timeout=2)
        fake.fail_next()
        wait_until(lambda: fake.opened >= 2)
        after = supervisor.wait_for_frame(after=before.index, timeout=2)
        assert after.index > before.index


def test_a_source_that_raises_an_unexpected_error_stays_supervised():
    calls = []

    def broken_open():
        calls.append(1)
        raise OSError("driver exploded")

    with CameraSupervisor(broken_open, stall_seconds=0.5, retry_initial=0.02, retry_maximum=0.02) as supervisor:
        wait_until(lambda: len(calls) >= 3)
        status = supervisor.status
        assert status.state == CameraState.OFFLINE and "OSError: driver exploded" in status.message


def test_frames_generator_yields_new_frames_only(fake):
    with supervise(fake) as supervisor:
        seen = []
        for frame in supervisor.frames():
            seen.append(frame.index)
            if len(seen) == 5:
                break
    assert seen == sorted(set(seen))


def test_stall_seconds_must_be_positive(fake):
    with pytest.raises(ValueError, match="stall_seconds"):
        CameraSupervisor(fake.open, stall_seconds=0)


@settings(deadline=None)  # pure arithmetic; only a loaded machine could make it slow
@given(st.integers(0, 200), st.floats(0.01, 10), st.floats(0.01, 100))
def test_retry_delay_grows_and_is_capped(attempt, initial, maximum):
    delay = retry_delay(attempt, initial, maximum)
    assert delay <= maximum
    assert delay <= retry_delay(attempt + 1, initial, maximum)
    assert delay >= min(initial, maximum)


def test_offline_reason_is_logged_once_per_reason(fake, caplog):
    fake.unplug()
    with caplog.at_level("WARNING", logger="hardware.supervisor"):
        with supervise(fake) as supervisor:
            wait_until(lambda: supervisor.status.failures >= 3)
    messages = [record.getMessage() for record in caplog.records]
    assert messages == ["camera fake offline: fake camera is not connected"]
