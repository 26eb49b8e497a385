"""Storage faults say what they are: a full disk answers 507 storage_full and the table goes on
once there is room; a database this program cannot write is refused at start naming every file at
fault (the -wal and -shm files SQLite keeps beside it too), and the table starts once they are
writable, mending the -wal/-shm files an earlier refused start left read-only."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import pytest
from table_helpers import TableClient, built_advisor, shutdown, table_app

from scorer.store import DATABASE_NAME, GameStore, StorageReadOnlyError, database_files, unwritable
from webui.app import EXTENSION

NOBODY = 65534


def test_a_full_disk_says_so_changes_nothing_and_the_table_goes_on_when_there_is_room(tmp_path):
    app = table_app(tmp_path, advisor=built_advisor())
    client = TableClient(app)
    try:
        client.new_game()
        database = app.extensions[EXTENSION].table.session.store._db
        pages = database.execute("PRAGMA page_count").fetchone()[0]
        database.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full from here on
        for _ in range(500):
            before = client.state()
            dice = {"dice": [1, 2, 3, 4, 5]}
            answer = client.post("/api/roll", dice) if before["game"]["rolls_left"] else client.post("/api/undo", {})
            if answer.status_code != 200:
                break
        assert answer.status_code == 507, answer.get_json()
        error = answer.get_json()["error"]
        assert error["code"] == "storage_full" and "is full" in error["message"]
        assert client.state() == before  # nothing of the refused change was kept
        database.execute(f"PRAGMA max_page_count = {pages + 1000}")  # space again
        assert client.post("/api/undo", {}).status_code == 200
    finally:
        shutdown(app)


def test_the_files_at_fault_are_named():
    paths = database_files(Path("/data/games.sqlite3"))
    assert [path.name for path in paths] == ["games.sqlite3", "games.sqlite3-wal", "games.sqlite3-shm"]
    with tempfile.TemporaryDirectory() as folder:
        present = [Path(folder) / name for name in ("a", "b")]
        for path in present:
            path.touch()
        assert unwritable([*present, Path(folder) / "absent"], writable=lambda path: path.name == "a") == [present[1]]


@contextlib.contextmanager
def without_root_powers():
    """Run the block as a user file permissions apply to (root writes read-only files anyway);
    as the user running the tests when that is not root."""
    if os.geteuid() != 0:
        yield
        return
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


@pytest.fixture
def shared_folder():
    folder = Path(tempfile.mkdtemp(prefix="yacht-storage-"))
    folder.chmod(0o777)  # for the user without_root_powers switches to
    yield folder
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()


def test_a_read_only_database_is_refused_at_start_naming_the_files_and_starts_once_mended(shared_folder):
    path = shared_folder / DATABASE_NAME
    wal, shm = database_files(path)[1:]
    with without_root_powers():
        store = GameStore(path)
        store.start_game(["Ana"])
        store.close()
        path.chmod(0o444)
        with pytest.raises(StorageReadOnlyError, match=str(path)):
            GameStore(path)
        assert not wal.exists() and not shm.exists()  # refused before SQLite made them read-only too

        # -wal and -shm left read-only by such a start (SQLite gives them the database's mode):
        for side in (wal, shm):
            side.touch()
            side.chmod(0o444)
        path.chmod(0o644)
        store = GameStore(path)  # mended: they are ours, and the database is writable again
        store.start_game(["Ben"])
        assert len(store.list_games()) == 2
        store.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to leave files the table's user does not own")
def test_read_only_wal_and_shm_files_that_are_not_ours_are_named(shared_folder):
    path = shared_folder / DATABASE_NAME
    with without_root_powers():
        GameStore(path).close()
    for side in database_files(path)[1:]:  # left by a start as root (sudo yacht-table serve)
        side.touch()
        side.chmod(0o444)
    with without_root_powers(), pytest.raises(StorageReadOnlyError) as refused:
        GameStore(path)
    named = str(refused.value).split("cannot be written: ")[1].split(" are read-only")[0]
    assert named.split(", ") == [f"{path}-wal", f"{path}-shm"]  # the database itself is fine
