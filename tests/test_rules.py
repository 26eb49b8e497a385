"""The scoring rules of RULES.md: worked examples, category edges, and invariants."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorer import CATEGORIES, ROW_MAXIMUM, score, score_all

dice_strategy = st.lists(st.integers(1, 6), min_size=5, max_size=5)


def test_categories_are_the_twelve_ids_in_sheet_order():
    assert CATEGORIES == (
        "yacht", "big_straight", "little_straight", "four_of_a_kind", "full_house", "choice",
        "sixes", "fives", "fours", "threes", "twos", "ones",
    )


@pytest.mark.parametrize(
    "dice, category, points",
    [
        # Worked examples of RULES.md.
        ((4, 4, 4, 4, 1), "four_of_a_kind", 17),
        ((6, 6, 6, 6, 6), "four_of_a_kind", 30),
        ((3, 3, 3, 6, 6), "full_house", 21),
        ((4, 4, 4, 4, 4), "full_house", 0),
        ((1, 1, 1, 1, 1), "yacht", 50),
        ((6, 6, 6, 6, 6), "yacht", 50),
        ((1, 4, 4, 4, 4), "four_of_a_kind", 17),  # Ana's turn
    ],
)
def test_worked_examples(dice, category, points):
    assert score(dice, category) == points


@pytest.mark.parametrize(
    "dice, category, points",
    [
        ((2, 2, 2, 2, 3), "yacht", 0),
        ((6, 5, 4, 3, 2), "big_straight", 30),
        ((1, 3, 4, 5, 6), "big_straight", 0),
        ((2, 3, 4, 5, 5), "big_straight", 0),
        ((5, 4, 3, 2, 1), "little_straight", 30),
        ((2, 3, 4, 5, 6), "little_straight", 0),
        ((1, 2, 3, 4, 4), "little_straight", 0),
        ((5, 5, 5, 2, 2), "four_of_a_kind", 0),
        ((5, 2, 5, 5, 5), "four_of_a_kind", 22),
        ((2, 2, 3, 3, 3), "full_house", 13),
        ((2, 2, 2, 2, 3), "full_house", 0),
        ((2, 2, 3, 3, 4), "full_house", 0),
        ((6, 6, 6, 5, 5), "full_house", 28),
        ((1, 1, 1, 1, 1), "choice", 5),
        ((6, 6, 6, 6, 6), "choice", 30),
        ((6, 6, 1, 6, 2), "sixes", 18),
        ((1, 2, 3, 4, 6), "fives", 0),
        ((5, 5, 5, 5, 5), "fives", 25),
        ((4, 1, 4, 2, 3), "fours", 8),
        ((3, 3, 3, 1, 1), "threes", 9),
        ((2, 1, 1, 1, 1), "twos", 2),
        ((1, 1, 2, 1, 6), "ones", 3),
        ((2, 3, 4, 5, 6), "ones", 0),
    ],
)
def test_category_edges(dice, category, points):
    assert score(dice, category) == points


def test_score_all_lists_every_category_in_order():
    scores = score_all([3, 3, 3, 6, 6])
    assert list(scores) == list(CATEGORIES)
    assert scores["full_house"] == 21
    assert scores["choice"] == 21
    assert scores["threes"] == 9
    assert scores["sixes"] == 12
    assert scores["yacht"] == 0


def test_numpy_integers_are_dice():
    assert score(np.array([4, 4, 4, 4, 1], dtype=np.int64), "four_of_a_kind") == 17
    assert score_all(np.array([1, 2, 3, 4, 5], dtype=np.uint8))["little_straight"] == 30


@pytest.mark.parametrize(
    "dice, fragment",
    [
        ([4, 4, 4, 4], "exactly 5 dice, got 4"),
        ([4, 4, 4, 4, 4, 4], "exactly 5 dice, got 6"),
        ([4, 4, 4, 7, 1], "die 4 must be from 1 to 6, got 7"),
        ([0, 4, 4, 4, 1], "die 1 must be from 1 to 6, got 0"),
        ([4, 4, 4.0, 4, 1], "die 3 must be a whole number"),
        ([4, 4, "4", 4, 1], "die 3 must be a whole number"),
        ([4, 4, True, 4, 1], "die 3 must be a whole number"),
        ([4, None, 4, 4, 1], "die 2 must be a whole number"),
        ("44441", "dice must be a sequence"),
        (None, "dice must be a sequence"),
        (44441, "dice must be a sequence"),
    ],
)
def test_bad_dice_raise_value_error_naming_the_problem(dice, fragment):
    with pytest.raises(ValueError, match=fragment):
        score(dice, "choice")
    with pytest.raises(ValueError, match=fragment):
        score_all(dice)


@pytest.mark.parametrize("category", ["Yacht", "bonus", "", None, 3])
def test_unknown_category_lists_valid_ids(category):
    with pytest.raises(ValueError, match="valid ids: yacht, big_straight.*ones"):
        score([1, 2, 3, 4, 5], category)


def test_row_maxima_add_up_to_303():
    assert sum(ROW_MAXIMUM.values()) == 303
    assert set(ROW_MAXIMUM) == set(CATEGORIES)


@given(dice_strategy, st.randoms())
def test_dice_order_never_matters(dice, rng):
    shuffled = list(dice)
    rng.shuffle(shuffled)
    assert score_all(dice) == score_all(shuffled)


@given(dice_strategy)
def test_every_score_lies_between_zero_and_the_row_maximum(dice):
    for category, points in score_all(dice).items():
        assert 0 <= points <= ROW_MAXIMUM[category]


@given(dice_strategy)
def test_four_of_a_kind_scores_only_with_four_equal_dice(dice):
    if score(dice, "four_of_a_kind") > 0:
        assert max(Counter(dice).values()) >= 4
        assert score(dice, "four_of_a_kind") == sum(dice)


@given(dice_strategy)
def test_full_house_and_yacht_are_never_both_positive(dice):
    scores = score_all(dice)
    assert not (scores["full_house"] > 0 and scores["yacht"] > 0)


@given(dice_strategy)
def test_number_rows_add_up_to_choice(dice):
    scores = score_all(dice)
    number_rows = ("ones", "twos", "threes", "fours", "fives", "sixes")
    assert sum(scores[row] for row in number_rows) == scores["choice"] == sum(dice)
