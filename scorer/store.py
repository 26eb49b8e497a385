"""Games kept on disk: an SQLite journal with one row per action, so a power cut loses nothing.

Every action on a game (its start, each roll, correction, record and undo) is one journal row,
committed before the caller answers anyone. A game is rebuilt by replaying its rows through
`scorer.Game`; the `games` table only caches what the list of past games shows (players, totals,
winners, dates) and is rewritten in the same transaction as the row that changed it.

WAL mode with synchronous=FULL: a commit is on disk when it returns, and a writer killed half-way
leaves the database as it was before that transaction.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .actions import Action, Undo
from .game import Game, GameError

SCHEMA_VERSION = 2
_LEGACY_VERSIONS_PER_BOOT = 1_000_000
DATABASE_NAME = "games.sqlite3"

_SCHEMA_V2 = """
CREATE TABLE games (
    id       INTEGER PRIMARY KEY,
    players  TEXT NOT NULL,
    started  TEXT NOT NULL,
    finished TEXT,
    totals   TEXT NOT NULL,
    winners  TEXT NOT NULL
);
CREATE TABLE journal (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id INTEGER NOT NULL REFERENCES games(id),
    kind    TEXT NOT NULL,
    action  TEXT NOT NULL,
    at      TEXT NOT NULL
);
CREATE INDEX journal_by_game ON journal(game_id, id);
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""


class StoreError(RuntimeError):
    """The database cannot be used as it is (newer than this program, or a journal that does not
    replay). Raised instead of guessing, so nothing on disk is overwritten."""


class DamagedJournalError(StoreError):
    """One row of a game's journal does not replay. `valid` is the game as the rows before it
    leave it (None when the bad row is the start), so that part can still be shown."""

    def __init__(self, game_id: int, row_id: int, kind: str, reason: str, valid: Game | None, rows_before: int):
        super().__init__(f"game {game_id}'s journal row {row_id} ({kind}) does not replay: {reason}; "
                         f"the {rows_before} row{'s' if rows_before != 1 else ''} before it do")
        self.game_id = game_id
        self.row_id = row_id
        self.valid = valid


class StorageFullError(StoreError):
    """The disk holding the database is full: nothing of the change was saved (the game is as it
    was), and the next change succeeds once there is room again."""

    code = "storage_full"


class StorageReadOnlyError(StoreError):
    """The database, or a file SQLite keeps beside it, cannot be written by this program."""

    code = "storage_read_only"


def database_files(path: Path) -> list[Path]:
    """The database and the files SQLite keeps beside it in WAL mode."""
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK, effective_ids=os.access in os.supports_effective_ids)


def unwritable(paths: list[Path], writable: Callable[[Path], bool] = _writable) -> list[Path]:
    """Those of `paths` that exist and this process cannot write."""
    return [path for path in paths if path.exists() and not writable(path)]


class UnknownGameError(KeyError):
    """No game with that id."""

    def __str__(self) -> str:
        return f"there is no game {self.args[0]!r}"


@dataclass(frozen=True)
class GameSummary:
    """One line of the list of past games."""

    id: int
    players: list[str]
    totals: list[int]
    winners: list[str]
    started: str
    finished: str | None

    @property
    def is_over(self) -> bool:
        return self.finished is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "players": self.players,
            "totals": self.totals,
            "winners": self.winners,
            "started": self.started,
            "finished": self.finished,
            "is_over": self.is_over,
        }


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class GameStore:
    """The journal of every game played at this table. Safe to share between threads."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._refuse_unwritable_files()
        # Autocommit mode: every write below opens its own explicit transaction.
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        self._db.execute("PRAGMA busy_timeout = 5000")
        try:
            self._refuse_newer_schema()
        except StoreError:
            self._db.close()
            raise
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = FULL")
        self._db.execute("PRAGMA foreign_keys = ON")
        self._migrate()

    @classmethod
    def in_data_dir(cls, data_dir: Path | str) -> GameStore:
        return cls(Path(data_dir) / DATABASE_NAME)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # --- schema ------------------------------------------------------------------------------

    def schema_version(self) -> int:
        with self._lock:
            return self._schema_version()

    def _schema_version(self) -> int:
        has_table = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        if not has_table:
            return 0
        row = self._db.execute("SELECT version FROM schema_version").fetchone()
        return row[0] if row else 0

    def _refuse_unwritable_files(self) -> None:
        """Checked before SQLite opens a database it could not write: it would create the -wal and
        -shm files read-only like the database, and they would go on refusing once the database
        itself was mended. Such files left by an earlier start are mended here when they are ours."""
        database, *beside = database_files(self.path)
        if not unwritable([database]):
            for path in unwritable(beside):
                with contextlib.suppress(OSError):  # not ours to change: named below instead
                    os.chmod(path, stat.S_IMODE(database.stat().st_mode))
        refused = unwritable(database_files(self.path) + [self.path.parent])
        if refused:
            raise StorageReadOnlyError(read_only_message(refused))

    def _refuse_newer_schema(self) -> None:
        version = self._schema_version()
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer Yacht Table (schema {version}, this "
                f"program knows up to {SCHEMA_VERSION}); upgrade the program, the file is "
                "left untouched"
            )

    def _migrate(self) -> None:
        with self._lock:
            version = self._schema_version()
            if version == SCHEMA_VERSION:
                return
            with self._transaction():
                if version == 0:
                    self._db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
                    self._db.execute("INSERT INTO schema_version VALUES (0)")
                    self._create_v2()
                elif version == 1:
                    self._migrate_v1_to_v2()
                self._db.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))

    def _create_v2(self) -> None:
        for statement in _SCHEMA_V2.split(";"):
            if statement.strip():
                self._db.execute(statement)

    def _migrate_v1_to_v2(self) -> None:
        """Version 1 saved each game as one JSON snapshot (players + actions) rewritten after every
        action, and the current game as a flag. Each snapshot becomes a start row plus one journal
        row per action."""
        self._db.execute("ALTER TABLE games RENAME TO games_v1")
        self._create_v2()
        old_games = self._db.execute(
            "SELECT id, saved, started, is_current FROM games_v1 ORDER BY id"
        ).fetchall()
        for game_id, saved, started, is_current in old_games:
            try:
                game = Game.from_json(saved)
            except GameError as error:
                raise StoreError(f"game {game_id} in the old database does not replay: {error}") from None
            self._db.execute(
                "INSERT INTO games (id, players, started, totals, winners) VALUES (?, ?, ?, '[]', '[]')",
                (game_id, _json(list(game.players)), started),
            )
            self._insert_row(game_id, "start", {"players": list(game.players)}, at=started)
            for action in game.actions:
                record = action.to_dict()
                self._insert_row(game_id, record["type"], record, at=started)
            self._write_summary(game_id, game)
            if is_current:
                self._set_meta("current_game", str(game_id))
        self._db.execute("DROP TABLE games_v1")

    # --- writing -----------------------------------------------------------------------------

    def start_game(self, players: object) -> tuple[int, Game]:
        """A new game, journaled and made the current one. InvalidPlayersError if the names are bad."""
        game = Game(players)  # type: ignore[arg-type]
        started = now_iso()
        with self._lock, self._transaction():
            cursor = self._db.execute(
                "INSERT INTO games (players, started, totals, winners) VALUES (?, ?, ?, '[]')",
                (_json(list(game.players)), started, _json(game.totals)),
            )
            game_id = int(cursor.lastrowid)  # type: ignore[arg-type]
            self._insert_row(game_id, "start", {"players": list(game.players)}, at=started)
            self._set_meta("current_game", str(game_id))
        return game_id, game

    def append(self, game_id: int, action: Action | Undo, after: Game) -> None:
        """Journal `action`, which the game has checked; `after` is the game it leads to (the list
        of past games shows its totals and winners)."""
        with self._lock, self._transaction():
            self._insert_row(game_id, action.to_dict()["type"], action.to_dict())
            self._write_summary(game_id, after)

    def set_current(self, game_id: int | None) -> None:
        with self._lock, self._transaction():
            if game_id is None:
                self._db.execute("DELETE FROM meta WHERE key = 'current_game'")
            else:
                self._require_game(game_id)
                self._set_meta("current_game", str(game_id))

    def reserve_versions(self, count: int, after: int = 0) -> int:
        """Set aside `count` state versions that no run of the table has used or will use again,
        all above `after`, and return the first. The table asks again when it has used them, so
        versions only ever grow, across restarts too, with one write per `count` changes."""
        with self._lock, self._transaction():
            reserved = self._get_meta("versions_reserved")
            if reserved is None:
                # Before reservations, each start numbered its versions from (starts) x 1,000,000.
                start = (int(self._get_meta("boots") or 0) + 1) * _LEGACY_VERSIONS_PER_BOOT
            else:
                start = int(reserved)
            start = max(start, after + 1)
            self._set_meta("versions_reserved", str(start + count))
        return start

    # --- reading -----------------------------------------------------------------------------

    def current_game_id(self) -> int | None:
        with self._lock:
            value = self._get_meta("current_game")
        return int(value) if value is not None else None

    def load(self, game_id: int) -> Game:
        """The game rebuilt by replaying its journal."""
        with self._lock:
            self._require_game(game_id)
            rows = self._db.execute(
                "SELECT id, kind, action FROM journal WHERE game_id = ? ORDER BY id", (game_id,)
            ).fetchall()
        game: Game | None = None
        for position, (row_id, kind, action_text) in enumerate(rows):
            try:
                action = json.loads(action_text)
                if kind == "start":
                    game = Game(action["players"])
                elif game is None:
                    raise StoreError(f"game {game_id}'s journal does not begin with its start")
                elif kind == "undo":
                    game.apply(Undo())
                else:
                    game.apply(action)
            except (GameError, KeyError, TypeError, json.JSONDecodeError) as error:
                # A refused action leaves the game as it was: `game` is what the rows before replay to.
                raise DamagedJournalError(game_id, row_id, kind, str(error), game, position) from None
        if game is None:
            raise StoreError(f"game {game_id} has no start row in the journal")
        return game

    def list_games(self) -> list[GameSummary]:
        """Every game, newest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, players, totals, winners, started, finished FROM games ORDER BY id DESC"
            ).fetchall()
        return [
            GameSummary(
                id=row[0],
                players=json.loads(row[1]),
                totals=json.loads(row[2]),
                winners=json.loads(row[3]),
                started=row[4],
                finished=row[5],
            )
            for row in rows
        ]

    # --- internals -----------------------------------------------------------------------------

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db, self.path)

    def _insert_row(self, game_id: int, kind: str, action: Mapping[str, Any], at: str | None = None) -> None:
        self._db.execute(
            "INSERT INTO journal (game_id, kind, action, at) VALUES (?, ?, ?, ?)",
            (game_id, kind, _json(dict(action)), at or now_iso()),
        )

    def _write_summary(self, game_id: int, game: Game) -> None:
        finished = None
        if game.is_over:
            row = self._db.execute("SELECT finished FROM games WHERE id = ?", (game_id,)).fetchone()
            finished = (row[0] if row else None) or now_iso()
        self._db.execute(
            "UPDATE games SET totals = ?, winners = ?, finished = ? WHERE id = ?",
            (_json(game.totals), _json(game.winners), finished, game_id),
        )

    def _require_game(self, game_id: int) -> None:
        if not 0 < game_id < 2**63:  # SQLite's integer range; anything outside names no game
            raise UnknownGameError(game_id)
        if not self._db.execute("SELECT 1 FROM games WHERE id = ?", (game_id,)).fetchone():
            raise UnknownGameError(game_id)

    def _get_meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        self._db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )


def read_only_message(paths: list[Path]) -> str:
    names = ", ".join(str(path) for path in paths)
    user = _user_name()
    return (f"the games database cannot be written: {names} "
            f"{'is' if len(paths) == 1 else 'are'} read-only for {user}; make "
            f"{'it' if len(paths) == 1 else 'them'} writable (chmod u+w, or sudo chown {user}) and "
            "start the table again")


def _user_name() -> str:
    try:
        import pwd  # Unix only, as the table is

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return "this user"


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back if the body raises; a full or read-only disk comes
    out as StorageFullError or StorageReadOnlyError."""

    def __init__(self, db: sqlite3.Connection, path: Path):
        self._db = db
        self._path = path

    def __enter__(self) -> None:
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            fault = self._fault(error)
            if fault is None:
                raise
            raise fault from error

    def __exit__(self, kind, error, traceback) -> None:
        if kind is None:
            try:
                self._db.execute("COMMIT")
                return
            except sqlite3.Error as commit_error:
                error = commit_error
        with contextlib.suppress(sqlite3.Error):  # SQLite may have rolled back already
            self._db.execute("ROLLBACK")
        fault = self._fault(error) if isinstance(error, sqlite3.Error) else None
        if fault is not None:
            raise fault from error
        if kind is None:
            raise error  # a failed COMMIT of another kind

    def _fault(self, error: sqlite3.Error) -> StoreError | None:
        code = getattr(error, "sqlite_errorcode", None)
        if code == sqlite3.SQLITE_FULL:
            return StorageFullError(f"the disk holding {self._path} is full: this change was not saved "
                                    "(the game is as it was); free some space and try again")
        if code is not None and code & 0xFF == sqlite3.SQLITE_READONLY:
            return StorageReadOnlyError(read_only_message(unwritable(database_files(self._path)) or [self._path]))
        return None
