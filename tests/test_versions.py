"""State versions only ever grow, across restarts too: a write made against a version seen before a
restart is refused after it, however many changes either run made."""

from __future__ import annotations

from table_helpers import built_advisor, table_engine

from hardware.supervisor import CameraState
from scorer.actions import Roll
from webui.engine import NewGame
from webui.engine import table as table_module
from webui.engine.errors import StaleVersionError


def test_versions_grow_across_restarts_however_many_changes_each_run_made(tmp_path, monkeypatch):
    # A small block, so each run below uses several: as a week of camera status changes would.
    monkeypatch.setattr(table_module, "VERSION_BLOCK", 7)
    seen: list[int] = []
    for run, changes in enumerate((3, 25, 0, 40)):
        engine = table_engine(tmp_path, advisor=built_advisor(), camera="replay:test", start=False)
        table = engine.table
        try:
            assert not seen or table.version > max(seen), (run, table.version, seen)
            seen.append(table.version)
            for change in range(changes):
                table.camera_changed(CameraState.LIVE if change % 2 else CameraState.OFFLINE, "flicker")
                assert table.version == seen[-1] + 1
                seen.append(table.version)
        finally:
            engine.close()


def test_a_version_from_before_a_restart_is_stale_after_it(tmp_path, monkeypatch):
    monkeypatch.setattr(table_module, "VERSION_BLOCK", 5)
    engine = table_engine(tmp_path, advisor=built_advisor(), start=False)
    table = engine.table
    table.apply(table.version, NewGame(["Ana", "Ben"]))
    old_versions = [table.version]
    for _ in range(12):  # more changes than one block holds
        table.camera_changed(CameraState.OFFLINE, "flicker")
        old_versions.append(table.version)
    engine.close()

    engine = table_engine(tmp_path, advisor=built_advisor(), start=False)
    table = engine.table
    try:
        for _ in range(30):  # the new run walks through as many versions as the old one made, and more
            for old in old_versions:
                try:
                    table.apply(old, Roll([1, 2, 3, 4, 5]))
                except StaleVersionError:
                    continue
                raise AssertionError(f"a write made against version {old} from before the restart was accepted")
            table.camera_changed(CameraState.OFFLINE, "flicker")
        assert table.version > max(old_versions)
    finally:
        engine.close()
