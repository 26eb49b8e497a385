"""The best-move advisor: the dice-space tables, the optimal strategy, advice, cache, simulator, CLI."""

import json
import os
import threading
from itertools import combinations, product
from math import isclose

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer import _throws
from scorer import advisor as advisor_module
from scorer.advisor import (
    ALL_USED,
    STATE_COUNT,
    Advisor,
    cache_path,
    solve_expected_rest,
)
from scorer.rules import CATEGORIES, ROW_MAXIMUM, score
from webui.cli import main

ALL = set(CATEGORIES)


def all_but(*open_categories):
    return sorted(ALL - set(open_categories))


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("advisor-cache")


@pytest.fixture(scope="module")
def advisor(cache_dir):
    return Advisor.load(cache_dir)


# --- the dice space ---------------------------------------------------------------------------

def test_dice_space_sizes_and_first_roll_chances():
    assert (_throws.KEEP_COUNT, _throws.THROW_COUNT) == (462, 252)
    assert isclose(_throws.FIRST_ROLL.sum(), 1.0)
    # 1-2-3-4-5 has 5! = 120 orderings of 7776; 6-6-6-6-6 has one.
    assert isclose(_throws.FIRST_ROLL[_throws.THROWS.index((1, 2, 3, 4, 5))], 120 / 7776)
    assert isclose(_throws.FIRST_ROLL[_throws.THROWS.index((6, 6, 6, 6, 6))], 1 / 7776)


def brute_force_keep_value(throw_values):
    """Each keep's expected value by enumerating every ordered outcome of the rolled dice."""
    values = np.zeros((_throws.KEEP_COUNT,) + throw_values.shape[1:])
    for keep, held in enumerate(_throws.MULTISETS):
        outcomes = list(product(range(1, 7), repeat=5 - len(held)))
        for rolled in outcomes:
            throw = _throws.THROWS.index(tuple(sorted(held + rolled)))
            values[keep] += throw_values[throw] / len(outcomes)
    return values


def test_expected_keep_value_matches_enumerating_every_outcome():
    throw_values = np.random.default_rng(7).random((252, 3))
    assert np.allclose(_throws.expected_keep_value(throw_values), brute_force_keep_value(throw_values))


def test_best_keep_value_is_the_max_over_every_subset_of_the_dice():
    keep_values = np.random.default_rng(8).random((462, 2))
    best = _throws.best_keep_value(keep_values)
    for throw_index, throw in enumerate(_throws.THROWS):
        subsets = {tuple(sorted(c)) for size in range(6) for c in combinations(throw, size)}
        keeps = [_throws.MULTISETS.index(s) for s in subsets]
        assert sorted(keeps) == sorted(
            _throws.THROW_KEEPS[throw_index, : _throws.THROW_KEEP_COUNT[throw_index]]
        )
        assert np.allclose(best[throw_index], keep_values[keeps].max(axis=0))


# --- the optimal strategy: values checked by hand ------------------------------------------------

def test_full_sheet_is_worth_nothing_and_a_fresh_game_its_expected_score(advisor):
    assert advisor.expected_rest(CATEGORIES) == 0.0
    assert advisor.expected_game == advisor.expected_rest([])
    assert 150 < advisor.expected_game < 303


def test_only_yacht_open_is_worth_50_times_the_known_three_roll_yacht_chance(advisor):
    # The chance of five of a kind within three rolls, keeping the largest group, is 0.0460286.
    assert advisor.expected_rest(all_but("yacht")) == pytest.approx(50 * 0.0460286, abs=1e-5)


def test_only_choice_open_is_worth_five_dice_played_with_thresholds(advisor):
    # One die: 3.5 with one roll left; keep 4+ with two (4.25); keep 5+ with three (14/3).
    assert advisor.expected_rest(all_but("choice")) == pytest.approx(5 * 14 / 3)


def test_only_yacht_open_with_four_sixes_keeps_the_four_sixes(advisor):
    advice = advisor.advise(all_but("yacht"), [6, 6, 1, 6, 6], 1)
    assert advice.best_keep == (6, 6, 6, 6)
    assert advice.best_keep_positions == (0, 1, 3, 4)
    assert not advice.stop
    # Two tries at one die showing 6: 1 - (5/6)^2.
    assert advice.keep_ev == pytest.approx(50 * (1 - (5 / 6) ** 2))


def test_only_ones_open_on_the_last_roll_takes_ones_for_two(advisor):
    advice = advisor.advise(all_but("ones"), [1, 1, 2, 3, 4], 3)
    assert (advice.best_category, advice.category_points, advice.category_ev) == ("ones", 2, 2.0)
    assert advice.best_keep is None and advice.keep_ev is None and advice.stop
    assert advice.keeps == ()


def test_only_choice_open_on_roll_two_keeps_dice_above_the_average(advisor):
    advice = advisor.advise(all_but("choice"), [6, 1, 6, 4, 6], 2)
    assert advice.best_keep == (4, 6, 6, 6)
    assert advice.keep_ev == pytest.approx(22 + 3.5)


def test_a_made_yacht_stops_and_scores_50_on_roll_one(advisor):
    advice = advisor.advise(all_but("yacht", "ones"), [3, 3, 3, 3, 3], 1)
    assert advice.stop and advice.best_keep == (3, 3, 3, 3, 3)
    assert advice.best_category == "yacht" and advice.category_points == 50


def test_the_rules_example_turn(advisor):
    # Ana has used Full House; after 2-2-4-4-6 she keeps the 4s, as a perfect player would.
    assert advisor.advise(["full_house"], [2, 2, 4, 4, 6], 2).best_keep == (4, 4)
    final = advisor.advise(["full_house"], [1, 4, 4, 4, 4], 3)
    assert dict((c, p) for c, p, _ in final.categories)["four_of_a_kind"] == 17
    assert {c for c, _, _ in final.categories} == ALL - {"full_house"}


def test_greedy_ranking_is_most_points_now_with_ties_to_the_smallest_row(advisor):
    advice = advisor.advise([], [2, 3, 4, 5, 6], 3)
    assert [c for c, _, _ in advice.greedy[:3]] == ["big_straight", "choice", "sixes"]
    scratch = advisor.advise(all_but("yacht", "ones", "twos"), [3, 3, 4, 5, 6], 3)
    assert [c for c, _, _ in scratch.greedy] == ["ones", "twos", "yacht"]


# --- invariants --------------------------------------------------------------------------------

used_sets = st.sets(st.sampled_from(CATEGORIES), max_size=11).map(sorted)
dice = st.lists(st.integers(1, 6), min_size=5, max_size=5)


@settings(max_examples=60, deadline=None)
@given(used=used_sets, extra=st.sampled_from(CATEGORIES))
def test_an_open_category_never_lowers_the_expected_rest(advisor, used, extra):
    # Entering anything in the extra category first, then playing on, scores at least as much.
    fuller = sorted(set(used) | {extra})
    assert advisor.expected_rest(used) >= advisor.expected_rest(fuller) - 1e-9
    assert advisor.expected_rest(used) <= sum(ROW_MAXIMUM[c] for c in ALL - set(used))


@settings(max_examples=60, deadline=None)
@given(used=used_sets, faces=dice, roll=st.integers(1, 3))
def test_advice_is_consistent(advisor, used, faces, roll):
    advice = advisor.advise(used, faces, roll)
    assert {c for c, _, _ in advice.categories} == ALL - set(used)
    evs = [ev for _, _, ev in advice.categories]
    assert evs == sorted(evs, reverse=True)
    for category, points, ev in advice.categories:
        assert points == score(faces, category)
        assert ev == pytest.approx(points + advisor.expected_rest(used + [category]))
        assert advisor.cost_of(used, faces, category) == pytest.approx(advice.category_ev - ev)
    assert [p for _, p, _ in advice.greedy] == sorted((p for _, p, _ in advice.greedy), reverse=True)
    if roll < 3:
        keep_evs = [ev for _, ev in advice.keeps]
        # Equal evs (to rounding) are ordered by dice held, so allow a rounding-sized step up.
        assert all(later <= earlier + 1e-9 for earlier, later in zip(keep_evs, keep_evs[1:]))
        assert len({keep for keep, _ in advice.keeps}) == len(advice.keeps)
        # Holding all five is one of the options, worth the best category now.
        assert dict(advice.keeps)[tuple(sorted(faces))] == pytest.approx(advice.category_ev)
        positions = advice.best_keep_positions
        assert len(set(positions)) == len(positions)
        assert sorted(faces[i] for i in positions) == list(advice.best_keep)
        # A roll more in hand is never worth less.
        later = advisor.advise(used, faces, roll + 1)
        assert advice.keep_ev >= (later.keep_ev or later.category_ev) - 1e-9
    assert json.loads(json.dumps(advice.to_dict())) == advice.to_dict()


def test_the_expected_game_is_the_average_best_keep_over_every_first_roll(advisor):
    first_roll_evs = [advisor.advise([], throw, 1).keep_ev for throw in _throws.THROWS]
    assert float(np.dot(_throws.FIRST_ROLL, first_roll_evs)) == pytest.approx(advisor.expected_game)


def test_cost_of_the_best_category_is_zero_and_a_used_one_is_refused(advisor):
    advice = advisor.advise(["choice"], [5, 5, 5, 5, 2], 3)
    assert advisor.cost_of(["choice"], [5, 5, 5, 5, 2], advice.best_category) == 0.0
    assert advisor.cost_of(["choice"], [5, 5, 5, 5, 2], "ones") > 0
    with pytest.raises(ValueError, match="already used"):
        advisor.cost_of(["choice"], [5, 5, 5, 5, 2], "choice")


@pytest.mark.parametrize(
    "used, faces, roll, message",
    [
        (["nope"], [1, 2, 3, 4, 5], 1, "unknown category"),
        ("choice", [1, 2, 3, 4, 5], 1, "not one string"),
        (CATEGORIES, [1, 2, 3, 4, 5], 1, "game is over"),
        ([], [1, 2, 3, 4, 5, 6], 1, "exactly 5 dice"),
        ([], [1, 2, 3, 4, 7], 1, "from 1 to 6"),
        ([], [1, 2, 3, 4, 5], 4, "from 1 to 3"),
        ([], [1, 2, 3, 4, 5], 0, "from 1 to 3"),
        ([], [1, 2, 3, 4, 5], True, "whole number"),
    ],
)
def test_bad_positions_are_refused_clearly(advisor, used, faces, roll, message):
    with pytest.raises(ValueError, match=message):
        advisor.advise(used, faces, roll)


def test_concurrent_readers_get_the_same_advice(advisor):
    expected = advisor.advise(["yacht"], [1, 2, 3, 3, 5], 1).to_dict()
    results = []

    def ask():
        results.extend(advisor.advise(["yacht"], [1, 2, 3, 3, 5], 1).to_dict() for _ in range(20))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 80


# --- simulation --------------------------------------------------------------------------------

def test_optimal_play_simulated_agrees_with_the_table_and_beats_greedy_widely(advisor):
    optimal = advisor.simulate(20_000, "optimal", seed=2026)
    greedy = advisor.simulate(20_000, "greedy", seed=2026)
    standard_error = optimal.std(ddof=1) / np.sqrt(len(optimal))
    assert abs(optimal.mean() - advisor.expected_game) < 3 * standard_error
    both_errors = np.hypot(standard_error, greedy.std(ddof=1) / np.sqrt(len(greedy)))
    assert optimal.mean() - greedy.mean() > max(5.0, 10 * both_errors)
    assert optimal.min() >= 0 and optimal.max() <= 303


def test_simulation_is_repeatable_with_a_seed_and_rejects_bad_arguments(advisor):
    assert np.array_equal(advisor.simulate(50, seed=1), advisor.simulate(50, seed=1))
    assert len(advisor.simulate(7, "greedy", seed=1, batch=3)) == 7
    for games in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="number of games"):
            advisor.simulate(games)
    with pytest.raises(ValueError, match="unknown strategy"):
        advisor.simulate(10, "lucky")


# --- the cache ---------------------------------------------------------------------------------

def test_a_missing_cache_is_built_saved_and_then_loaded(tmp_path):
    built = Advisor.load(tmp_path)
    assert built.source.startswith("built (no cache yet)")
    assert cache_path(tmp_path).exists()
    loaded = Advisor.load(tmp_path)
    assert loaded.source.startswith("loaded")
    assert loaded.expected_game == built.expected_game
    assert [p.name for p in tmp_path.iterdir()] == [cache_path(tmp_path).name]  # no temp left


@pytest.mark.parametrize(
    "damage, reason",
    [
        (lambda data: data[: len(data) // 2], "bytes instead of"),
        (lambda data: data[:-1] + bytes([data[-1] ^ 0x01]), "checksum"),
        (lambda data: b"NOTATABL" + data[8:], "not an advisor table"),
        (lambda data: b"", "bytes instead of"),
    ],
)
def test_a_truncated_or_corrupt_cache_is_detected_and_rebuilt(cache_dir, tmp_path, damage, reason):
    good = cache_path(cache_dir).read_bytes()
    cache_path(tmp_path).write_bytes(damage(good))
    rebuilt = Advisor.load(tmp_path)
    assert reason in rebuilt.source
    assert cache_path(tmp_path).read_bytes() == good


def test_a_cache_for_other_rules_is_rebuilt(cache_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(advisor_module, "_RULES_DIGEST", b"\x00" * 32)
    cache_path(tmp_path).write_bytes(advisor_module._encode(np.zeros(STATE_COUNT)))
    monkeypatch.undo()
    assert "different rules" in Advisor.load(tmp_path).source


def test_a_cache_that_cannot_be_written_still_gives_advice(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    advisor = Advisor.load(blocker)
    assert "cache not written" in advisor.source
    assert advisor.expected_game > 150


def test_a_failed_write_leaves_the_old_cache_and_no_temporary_file(cache_dir, tmp_path, monkeypatch):
    path = cache_path(tmp_path)
    path.write_bytes(b"old")

    def power_cut(source, target):
        raise OSError("power cut")

    monkeypatch.setattr(os, "replace", power_cut)
    advisor = Advisor.load(tmp_path)
    assert "power cut" in advisor.source
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_the_table_has_one_value_per_used_set():
    table = solve_expected_rest()
    assert table.shape == (STATE_COUNT,) and table[ALL_USED] == 0
    with pytest.raises(ValueError, match="4096 values"):
        Advisor(table[:10], "test")


# --- the command line --------------------------------------------------------------------------

def run(capsys, cache_dir, *args):
    status = main([*args, "--cache-dir", str(cache_dir)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cli_advise_prints_the_best_keep_and_category(capsys, cache_dir):
    status, out, err = run(capsys, cache_dir, "advise", "1,2,2,4,6", "--roll", "1",
                           "--used", "full_house,choice")
    assert status == 0 and err == ""
    assert "best keep: keep " in out and "best category if you stop now: " in out


def test_cli_advise_json_matches_the_api(capsys, cache_dir, advisor):
    status, out, _ = run(capsys, cache_dir, "advise", "6,6,6,6,1", "--roll", "1",
                         "--used", ",".join(all_but("yacht")), "--json")
    assert status == 0
    assert json.loads(out) == advisor.advise(all_but("yacht"), [6, 6, 6, 6, 1], 1).to_dict()
    assert json.loads(out)["best_keep"] == [6, 6, 6, 6]


def test_cli_expected_prints_two_decimals(capsys, cache_dir, advisor):
    status, out, _ = run(capsys, cache_dir, "advise", "--expected")
    assert (status, out) == (0, f"{advisor.expected_game:.2f}\n")


def test_cli_simulate_prints_mean_deviation_and_error(capsys, cache_dir):
    status, out, _ = run(capsys, cache_dir, "simulate", "--games", "200", "--strategy", "greedy",
                         "--seed", "4", "--json")
    report = json.loads(out)
    assert status == 0 and report["games"] == 200 and report["seed"] == 4
    assert report["standard_error"] == pytest.approx(report["std"] / np.sqrt(200))
    status, out, _ = run(capsys, cache_dir, "simulate", "--games", "200", "--seed", "4")
    assert status == 0 and "standard error" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["advise", "1,2,2,4,6", "--roll", "4"], "from 1 to 3"),
        (["advise", "1,2,2,4,6", "--used", "full_house,fullhouse"], "unknown category 'fullhouse'"),
        (["advise", "1,2,2,4,6,6"], "exactly 5 dice"),
        (["advise", "1,2,x,4,6"], "whole numbers"),
        (["advise"], "give the five dice"),
        (["advise", "1,2,2,4,6", "--expected"], "no dice"),
        (["advise", "1,2,2,4,6", "--used", ",".join(CATEGORIES)], "game is over"),
        (["simulate", "--games", "0"], "at least 1"),
        (["simulate", "--strategy", "lucky"], "unknown strategy"),
    ],
)
def test_cli_bad_arguments_exit_2_with_a_clear_message(capsys, cache_dir, args, message):
    status, out, err = run(capsys, cache_dir, *args)
    assert status == 2 and out == ""
    assert message in err and err.count("\n") == 1
