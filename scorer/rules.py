"""The scoring rules of ../shared/RULES.md: twelve categories, five six-sided dice.

Everything here is pure: dice in, points out.
"""

from __future__ import annotations

import numbers
from collections import Counter
from collections.abc import Iterable, Sequence

DICE_PER_ROLL = 5
ROLLS_PER_TURN = 3
FACES = (1, 2, 3, 4, 5, 6)

# Score-sheet order, as RULES.md lists them.
CATEGORIES: tuple[str, ...] = (
    "yacht",
    "big_straight",
    "little_straight",
    "four_of_a_kind",
    "full_house",
    "choice",
    "sixes",
    "fives",
    "fours",
    "threes",
    "twos",
    "ones",
)

# The most each row can score (RULES.md, "Maximum per row").
ROW_MAXIMUM: dict[str, int] = {
    "yacht": 50,
    "big_straight": 30,
    "little_straight": 30,
    "four_of_a_kind": 30,
    "full_house": 28,
    "choice": 30,
    "sixes": 30,
    "fives": 25,
    "fours": 20,
    "threes": 15,
    "twos": 10,
    "ones": 5,
}

_NUMBER_ROWS = {"ones": 1, "twos": 2, "threes": 3, "fours": 4, "fives": 5, "sixes": 6}


def validate_die(value: object, position: int | None = None) -> int:
    """One die's face as a plain int, or ValueError saying what is wrong with it."""
    where = f"die {position + 1}" if position is not None else "die"
    # bool is an Integral, but True is not a die face anyone meant to type.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{where} must be a whole number from 1 to 6, got {value!r}")
    face = int(value)
    if face not in FACES:
        raise ValueError(f"{where} must be from 1 to 6, got {face}")
    return face


def validate_dice(dice: object) -> tuple[int, ...]:
    """Five faces as a tuple of plain ints, or ValueError naming the problem."""
    if dice is None or isinstance(dice, (str, bytes)) or not isinstance(dice, Iterable):
        raise ValueError(f"dice must be a sequence of {DICE_PER_ROLL} whole numbers, got {dice!r}")
    values = list(dice)
    if len(values) != DICE_PER_ROLL:
        raise ValueError(f"a roll has exactly {DICE_PER_ROLL} dice, got {len(values)}")
    return tuple(validate_die(v, i) for i, v in enumerate(values))


def validate_category(category: object) -> str:
    if category not in CATEGORIES:
        raise ValueError(f"unknown category {category!r}; valid ids: {', '.join(CATEGORIES)}")
    return category  # type: ignore[return-value]


def _score_valid(faces: Sequence[int], category: str) -> int:
    counts = Counter(faces)
    total = sum(faces)
    if category in _NUMBER_ROWS:
        face = _NUMBER_ROWS[category]
        return face * counts[face]
    if category == "choice":
        return total
    if category == "yacht":
        return 50 if len(counts) == 1 else 0
    if category == "big_straight":
        return 30 if sorted(faces) == [2, 3, 4, 5, 6] else 0
    if category == "little_straight":
        return 30 if sorted(faces) == [1, 2, 3, 4, 5] else 0
    if category == "four_of_a_kind":
        return total if max(counts.values()) >= 4 else 0
    if category == "full_house":
        return total if sorted(counts.values()) == [2, 3] else 0
    raise AssertionError(category)  # validate_category keeps us from here


def score(dice: object, category: object) -> int:
    """Points that `dice` would score in `category`."""
    return _score_valid(validate_dice(dice), validate_category(category))


def score_all(dice: object) -> dict[str, int]:
    """Points for every category, in score-sheet order."""
    faces = validate_dice(dice)
    return {category: _score_valid(faces, category) for category in CATEGORIES}
