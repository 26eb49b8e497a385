"""The SQLite journal: every action survives a reopen, old databases are migrated, past games listed."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer import CATEGORIES, Game, GameError
from scorer.actions import Undo
from scorer.game import InvalidPlayersError
from scorer.store import SCHEMA_VERSION, GameStore, StoreError, UnknownGameError


@pytest.fixture
def store(tmp_path):
    opened = GameStore.in_data_dir(tmp_path)
    yield opened
    opened.close()


def play(store: GameStore, game_id: int, game: Game, action: dict | Undo) -> None:
    checked = game.check(action)
    store.append(game_id, checked, game.followed_by(checked))
    game.apply(checked)


def test_a_new_database_has_the_current_schema_in_wal_mode(store):
    assert store.schema_version() == SCHEMA_VERSION
    mode = sqlite3.connect(store.path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_a_game_is_rebuilt_from_its_journal_after_reopening(tmp_path):
    store = GameStore.in_data_dir(tmp_path)
    game_id, game = store.start_game(["Ana", "Ben"])
    play(store, game_id, game, {"type": "roll", "dice": [1, 2, 3, 4, 5], "source": "camera"})
    play(store, game_id, game, {"type": "correct", "dice": [1, 2, 3, 4, 6]})
    play(store, game_id, game, {"type": "record", "category": "choice"})
    store.close()

    reopened = GameStore.in_data_dir(tmp_path)
    assert reopened.current_game_id() == game_id
    assert reopened.load(game_id) == game
    assert reopened.load(game_id).sheets[0] == {"choice": 16}


def test_undo_is_journaled_and_replayed(store):
    game_id, game = store.start_game(["Ana"])
    play(store, game_id, game, {"type": "roll", "dice": [6, 6, 6, 6, 6]})
    play(store, game_id, game, {"type": "record", "category": "yacht"})
    store.append(game_id, Undo(), game.followed_by(Undo()))
    game.undo()
    rows = sqlite3.connect(store.path).execute("SELECT COUNT(*) FROM journal WHERE game_id = ?", (game_id,))
    assert rows.fetchone()[0] == 4  # start, roll, record, undo
    rebuilt = store.load(game_id)
    assert rebuilt.sheets == [{}]
    assert rebuilt.dice == (6, 6, 6, 6, 6)
    assert store.list_games()[0].totals == [0]


def test_bad_player_names_store_nothing(store):
    with pytest.raises(InvalidPlayersError):
        store.start_game([])
    assert store.list_games() == []
    assert store.current_game_id() is None


def test_past_games_are_listed_newest_first_with_totals_winners_and_dates(store):
    first_id, first = store.start_game(["Ana"])
    for category in CATEGORIES:
        play(store, first_id, first, {"type": "roll", "dice": [5, 5, 5, 5, 5]})
        play(store, first_id, first, {"type": "record", "category": category})
    second_id, _ = store.start_game(["Ben", "Cy"])

    listed = store.list_games()
    assert [g.id for g in listed] == [second_id, first_id]
    finished = listed[1].to_dict()
    assert finished["players"] == ["Ana"]
    assert finished["totals"] == [first.totals[0]]
    assert finished["winners"] == ["Ana"]
    assert finished["is_over"] is True
    assert finished["finished"] >= finished["started"]
    assert listed[0].to_dict()["finished"] is None
    assert store.current_game_id() == second_id


def test_resume_and_unknown_game(store):
    first_id, _ = store.start_game(["Ana"])
    store.start_game(["Ben"])
    store.set_current(first_id)
    assert store.current_game_id() == first_id
    with pytest.raises(UnknownGameError):
        store.set_current(999)
    with pytest.raises(UnknownGameError):
        store.load(999)
    assert store.current_game_id() == first_id


def test_reserved_versions_never_overlap_across_reopens(tmp_path):
    store = GameStore.in_data_dir(tmp_path)
    first = store.reserve_versions(10)
    assert store.reserve_versions(10) == first + 10
    assert store.reserve_versions(10, after=first + 500) == first + 501  # past what was used
    store.close()
    reopened = GameStore.in_data_dir(tmp_path)
    assert reopened.reserve_versions(10) == first + 511
    reopened.close()


def test_a_database_from_before_reservations_starts_above_its_last_start(tmp_path):
    store = GameStore.in_data_dir(tmp_path)
    store._db.execute("INSERT INTO meta (key, value) VALUES ('boots', '3')")
    assert store.reserve_versions(10) == 4_000_000  # the old scheme's next start
    store.close()


def _write_v1_database(path, games):
    """The layout of version 1: one JSON snapshot per game, rewritten after each action."""
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE schema_version (version INTEGER NOT NULL);
        INSERT INTO schema_version VALUES (1);
        CREATE TABLE games (id INTEGER PRIMARY KEY, saved TEXT NOT NULL, started TEXT NOT NULL,
                            is_current INTEGER NOT NULL DEFAULT 0);
        """
    )
    for game_id, (game, is_current) in enumerate(games, start=1):
        db.execute(
            "INSERT INTO games VALUES (?, ?, ?, ?)",
            (game_id, game.to_json(), f"2025-01-0{game_id}T20:00:00+00:00", int(is_current)),
        )
    db.commit()
    db.close()


def test_a_version_1_database_is_migrated_not_discarded(tmp_path):
    old = Game(["Ana", "Ben"])
    old.roll([2, 2, 3, 3, 3])
    old.record("full_house")
    old.roll([1, 1, 1, 1, 2])
    current = Game(["Zoé"])
    current.roll([4, 4, 4, 4, 4])
    _write_v1_database(tmp_path / "games.sqlite3", [(old, False), (current, True)])

    store = GameStore.in_data_dir(tmp_path)
    assert store.schema_version() == SCHEMA_VERSION
    assert store.load(1) == old
    assert store.load(2) == current
    assert store.current_game_id() == 2
    listed = {g.id: g for g in store.list_games()}
    assert listed[1].totals == [13, 0]
    assert listed[1].started == "2025-01-01T20:00:00+00:00"
    # The migrated journal takes new actions like any other.
    play(store, 2, current, {"type": "record", "category": "yacht"})
    assert store.load(2).totals == [50]


def test_a_database_from_a_newer_program_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "games.sqlite3"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE schema_version (version INTEGER); INSERT INTO schema_version VALUES (99);")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="newer"):
        GameStore(path)
    assert path.read_bytes() == before


def test_a_journal_that_does_not_replay_is_reported_not_guessed(store):
    game_id, game = store.start_game(["Ana"])
    play(store, game_id, game, {"type": "roll", "dice": [1, 1, 1, 1, 1]})
    raw = sqlite3.connect(store.path)
    raw.execute("UPDATE journal SET action = '{\"type\":\"roll\",\"dice\":[9]}' WHERE kind = 'roll'")
    raw.commit()
    raw.close()
    with pytest.raises(StoreError, match="does not replay"):
        store.load(game_id)


actions = st.one_of(
    st.builds(lambda d: {"type": "roll", "dice": d}, st.lists(st.integers(1, 6), min_size=5, max_size=5)),
    st.builds(lambda d: {"type": "correct", "dice": d}, st.lists(st.integers(1, 6), min_size=5, max_size=5)),
    st.builds(lambda c: {"type": "record", "category": c}, st.sampled_from(CATEGORIES)),
    st.just({"type": "undo"}),
)


@settings(max_examples=30, deadline=None)
@given(st.lists(actions, max_size=40))
def test_any_accepted_sequence_replays_to_the_same_game(tmp_path_factory, sequence):
    store = GameStore.in_data_dir(tmp_path_factory.mktemp("journal"))
    game_id, game = store.start_game(["Ana", "Ben"])
    for action in sequence:
        try:
            play(store, game_id, game, Undo() if action["type"] == "undo" else action)
        except GameError:
            pass
    assert store.load(game_id) == game
    assert store.list_games()[0].totals == game.totals
    store.close()
