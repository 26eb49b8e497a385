"""The best-move advisor: exact optimal solitaire play for the rules of ../shared/RULES.md.

With no bonus, what is left of a player's game depends only on which of the 12 categories they have
used, so the whole strategy is one number per used set (2^12 of them): the expected score of the
rest of the game from the start of a turn. A dynamic program over the three roll stages of a turn
computes them from the full sheet backwards, a few hundred milliseconds with numpy, and the table is
cached on disk.

"ev" everywhere in this module means: the expected score of the rest of the player's solitaire game
from that point, this turn's points included and points banked in earlier turns excluded. So at the
first roll of a fresh sheet every option's ev is near the optimal expected score of a whole game,
and in the last turn a category's ev is just the points it scores.

In a multi-player game the advice maximises the current player's own expected score; it does not
play to beat anyone.
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import _throws
from ._throws import (
    FACE_CODE,
    FIRST_ROLL,
    KEEP_CODE,
    KEEP_SIZE,
    MULTISETS,
    THROW_KEEP_COUNT,
    THROW_KEEPS,
    THROW_OFFSET,
    best_keep_value,
    expected_keep_value,
    keep_of_code,
    keep_of_faces,
)
from .files import write_atomically
from .rules import (
    CATEGORIES,
    DICE_PER_ROLL,
    FACES,
    ROLLS_PER_TURN,
    ROW_MAXIMUM,
    score_all,
    validate_category,
    validate_dice,
)

log = logging.getLogger(__name__)

STATE_COUNT = 1 << len(CATEGORIES)
ALL_USED = STATE_COUNT - 1
CATEGORY_BITS = 1 << np.arange(len(CATEGORIES), dtype=np.int64)
STRATEGIES = ("optimal", "greedy")

# SCORES[t, c] = points of throw t in category c, straight from the rules module.
SCORES = np.array([list(score_all(throw).values()) for throw in _throws.THROWS], dtype=np.float64)

_STATES = np.arange(STATE_COUNT, dtype=np.int64)
_USED_COUNT = np.array([bin(state).count("1") for state in range(STATE_COUNT)])
# Turns are solved from the fullest sheets backwards: a state depends only on states with one more
# category used, so each level is one batch of matrix operations.
_STATES_BY_USED_COUNT = tuple(
    _STATES[_USED_COUNT == used] for used in range(len(CATEGORIES) - 1, -1, -1)
)

CACHE_FORMAT_VERSION = 1
_CACHE_MAGIC = b"YTADVISE"
_CACHE_HEADER = struct.Struct("<8sII32s32s")  # magic, version, state count, rules digest, payload digest
# Changing the rules changes SCORES, which makes every cached table invalid.
_RULES_DIGEST = hashlib.sha256(SCORES.tobytes()).digest()


class CacheError(Exception):
    """A cache file that cannot be trusted; the message says why."""


def _turn_tables(states: np.ndarray, value_after_turn: np.ndarray):
    """One turn for a batch of n used-sets.

    value_after_turn[s] is what the player counts on from state s onwards. Returns the value of the
    turn's start (n,), and the value of every keep before the second and before the third roll
    (462, n each: states last, so that choosing keeps gathers whole rows).
    """
    next_states = CATEGORY_BITS[:, None] | states
    after = np.where(CATEGORY_BITS[:, None] & states, -np.inf, value_after_turn[next_states])
    last_throw = np.full((len(SCORES), len(states)), -np.inf)
    for points, value_after in zip(SCORES.T, after):
        np.maximum(last_throw, points[:, None] + value_after, out=last_throw)
    keep_before_last = expected_keep_value(last_throw)
    second_throw = best_keep_value(keep_before_last)
    keep_before_second = expected_keep_value(second_throw)
    first_throw = best_keep_value(keep_before_second)
    return FIRST_ROLL @ first_throw, keep_before_second, keep_before_last


def solve_expected_rest() -> np.ndarray:
    """The optimal ev at the start of a turn for every used set (bit i = CATEGORIES[i] used)."""
    expected = np.zeros(STATE_COUNT)
    for states in _STATES_BY_USED_COUNT:
        expected[states] = _turn_tables(states, expected)[0]
    return expected


# --- the cache ----------------------------------------------------------------------------------

def cache_path(cache_dir: str | os.PathLike) -> Path:
    return Path(cache_dir) / f"advisor-v{CACHE_FORMAT_VERSION}.bin"


def _encode(expected: np.ndarray) -> bytes:
    payload = expected.astype("<f8").tobytes()
    header = _CACHE_HEADER.pack(
        _CACHE_MAGIC, CACHE_FORMAT_VERSION, STATE_COUNT, _RULES_DIGEST, hashlib.sha256(payload).digest()
    )
    return header + payload


def _decode(data: bytes) -> np.ndarray:
    expected_length = _CACHE_HEADER.size + STATE_COUNT * 8
    if len(data) != expected_length:
        raise CacheError(f"{len(data)} bytes instead of {expected_length}")
    magic, version, count, rules_digest, payload_digest = _CACHE_HEADER.unpack_from(data)
    if magic != _CACHE_MAGIC:
        raise CacheError("not an advisor table")
    if version != CACHE_FORMAT_VERSION or count != STATE_COUNT:
        raise CacheError(f"format {version} with {count} states, expected {CACHE_FORMAT_VERSION}")
    if rules_digest != _RULES_DIGEST:
        raise CacheError("built for different rules")
    payload = data[_CACHE_HEADER.size:]
    if hashlib.sha256(payload).digest() != payload_digest:
        raise CacheError("checksum mismatch")
    expected = np.frombuffer(payload, dtype="<f8").astype(np.float64)
    if not np.isfinite(expected).all() or expected[ALL_USED] != 0.0:
        raise CacheError("values out of range")
    return expected


# --- advice -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Advice:
    """What a perfect player would do now. Every ev is as the module docstring defines it.

    keeps: each distinct set of dice values the player may hold, best first, while rolls remain
    (holding all five means stopping now). categories: each open category with (points now, ev),
    best ev first. greedy: the same triples ordered by points now, for comparison.
    """

    used: tuple[str, ...]
    dice: tuple[int, ...]
    roll_number: int
    best_keep: tuple[int, ...] | None
    best_keep_positions: tuple[int, ...] | None
    keep_ev: float | None
    best_category: str
    category_points: int
    category_ev: float
    keeps: tuple[tuple[tuple[int, ...], float], ...]
    categories: tuple[tuple[str, int, float], ...]
    greedy: tuple[tuple[str, int, float], ...]

    @property
    def rolls_left(self) -> int:
        return ROLLS_PER_TURN - self.roll_number

    @property
    def stop(self) -> bool:
        """True when the best move is to enter a category now rather than roll again."""
        return self.best_keep is None or len(self.best_keep) == DICE_PER_ROLL

    def to_dict(self) -> dict[str, Any]:
        return {
            "used": list(self.used),
            "dice": list(self.dice),
            "roll_number": self.roll_number,
            "rolls_left": self.rolls_left,
            "stop": self.stop,
            "best_keep": None if self.best_keep is None else list(self.best_keep),
            "best_keep_positions": (
                None if self.best_keep_positions is None else list(self.best_keep_positions)
            ),
            "keep_ev": self.keep_ev,
            "best_category": self.best_category,
            "category_points": self.category_points,
            "category_ev": self.category_ev,
            "keeps": [{"keep": list(keep), "ev": ev} for keep, ev in self.keeps],
            "categories": [
                {"category": c, "points": points, "ev": ev} for c, points, ev in self.categories
            ],
            "greedy": [{"category": c, "points": points, "ev": ev} for c, points, ev in self.greedy],
        }


def used_state(used: Iterable[str]) -> int:
    """The bit set of a collection of category ids; ValueError for an unknown id."""
    if isinstance(used, (str, bytes)):
        raise ValueError("used categories must be a collection of category ids, not one string")
    state = 0
    for category in used:
        state |= 1 << CATEGORIES.index(validate_category(category))
    return state


def _open_state(used: Iterable[str]) -> int:
    state = used_state(used)
    if state == ALL_USED:
        raise ValueError("every category is used: the game is over, there is nothing to advise")
    return state


def _validate_roll_number(roll_number: object) -> int:
    if isinstance(roll_number, bool) or not isinstance(roll_number, (int, np.integer)):
        raise ValueError(f"roll number must be a whole number from 1 to {ROLLS_PER_TURN}")
    if not 1 <= roll_number <= ROLLS_PER_TURN:
        raise ValueError(f"roll number must be from 1 to {ROLLS_PER_TURN}, got {roll_number}")
    return int(roll_number)


def _positions_of(keep: tuple[int, ...], dice: tuple[int, ...]) -> tuple[int, ...]:
    """Positions in `dice` (as given) of the dice to hold for `keep`."""
    remaining = list(keep)
    positions = []
    for position, face in enumerate(dice):
        if face in remaining:
            remaining.remove(face)
            positions.append(position)
    return tuple(positions)


class Advisor:
    """The optimal strategy table and the advice drawn from it. Immutable: safe to share between
    threads."""

    def __init__(self, expected_rest: np.ndarray, source: str):
        table = np.array(expected_rest, dtype=np.float64)
        if table.shape != (STATE_COUNT,):
            raise ValueError(f"an advisor table has {STATE_COUNT} values, got shape {table.shape}")
        table.flags.writeable = False
        self._expected_rest = table
        self.source = source  # how the table was obtained: loaded, built, or rebuilt and why

    @classmethod
    def build(cls) -> Advisor:
        return cls(solve_expected_rest(), "built")

    @classmethod
    def load(cls, cache_dir: str | os.PathLike) -> Advisor:
        """The table from the cache in `cache_dir` (the table's data directory). A missing,
        truncated, corrupt or outdated cache is rebuilt and rewritten; a cache that cannot be
        written is reported in `.source` and costs only the rebuild next time."""
        path = cache_path(cache_dir)
        try:
            return cls(_decode(path.read_bytes()), f"loaded from {path}")
        except FileNotFoundError:
            reason = "no cache yet"
        except (OSError, CacheError) as error:
            reason = f"cache unusable: {error}"
            log.warning("advisor cache %s rebuilt: %s", path, error)
        expected = solve_expected_rest()
        try:
            write_atomically(path, _encode(expected))
        except OSError as error:
            log.warning("advisor cache %s not written: %s", path, error)
            return cls(expected, f"built ({reason}); cache not written: {error}")
        return cls(expected, f"built ({reason}), saved to {path}")

    @property
    def expected_game(self) -> float:
        """The optimal expected score of a whole solitaire game."""
        return float(self._expected_rest[0])

    def expected_rest(self, used: Iterable[str]) -> float:
        """The optimal ev at the start of a turn with `used` categories filled in."""
        return float(self._expected_rest[used_state(used)])

    def _category_evs(self, state: int, throw: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Open category indices, their points with this throw, and their evs."""
        open_indices = np.flatnonzero((state & CATEGORY_BITS) == 0)
        points = SCORES[throw, open_indices]
        return open_indices, points, points + self._expected_rest[state | CATEGORY_BITS[open_indices]]

    def advise(self, used: Iterable[str], dice: Sequence[int], roll_number: int) -> Advice:
        """Advice after roll `roll_number` (1..3) of a turn showing `dice`, with `used` filled in."""
        state = _open_state(used)
        faces = validate_dice(dice)
        roll_number = _validate_roll_number(roll_number)
        throw = keep_of_faces(faces) - THROW_OFFSET

        open_indices, points, evs = self._category_evs(state, throw)
        by_ev = sorted(zip(open_indices, points, evs), key=lambda row: -row[2])
        categories = tuple((CATEGORIES[i], int(p), float(ev)) for i, p, ev in by_ev)
        greedy = tuple(sorted(categories, key=lambda row: (-row[1], ROW_MAXIMUM[row[0]])))

        keeps: tuple[tuple[tuple[int, ...], float], ...] = ()
        if roll_number < ROLLS_PER_TURN:
            _, before_second, before_last = _turn_tables(np.array([state]), self._expected_rest)
            keep_values = (before_second if roll_number == 1 else before_last)[:, 0].copy()
            # Holding all five means stopping. The table values it as "skip a roll and decide
            # again", which never beats the best other option (a held subset with more rolls
            # left is worth at least as much), so the best choice and its ev are the same.
            keep_values[THROW_OFFSET + throw] = categories[0][2]
            choices = THROW_KEEPS[throw, : THROW_KEEP_COUNT[throw]]
            # Between equal evs, hold more dice: rolling for nothing is wasted effort at a table.
            ranked = sorted(choices, key=lambda k: (-round(keep_values[k], 9), -KEEP_SIZE[k]))
            keeps = tuple((MULTISETS[k], float(keep_values[k])) for k in ranked)
        best_keep = keeps[0][0] if keeps else None
        return Advice(
            used=tuple(c for i, c in enumerate(CATEGORIES) if state >> i & 1),
            dice=faces,
            roll_number=roll_number,
            best_keep=best_keep,
            best_keep_positions=None if best_keep is None else _positions_of(best_keep, faces),
            keep_ev=keeps[0][1] if keeps else None,
            best_category=categories[0][0],
            category_points=categories[0][1],
            category_ev=categories[0][2],
            keeps=keeps,
            categories=categories,
            greedy=greedy,
        )

    def cost_of(self, used: Iterable[str], dice: Sequence[int], category: str) -> float:
        """Expected points lost by entering the final `dice` in `category` instead of the best
        open category (0 for the best one)."""
        state = _open_state(used)
        chosen = CATEGORIES.index(validate_category(category))
        if state >> chosen & 1:
            raise ValueError(f"category {category!r} is already used")
        throw = keep_of_faces(validate_dice(dice)) - THROW_OFFSET
        open_indices, _, evs = self._category_evs(state, throw)
        return float(evs.max() - evs[list(open_indices).index(chosen)])

    # --- simulation -----------------------------------------------------------------------------

    def simulate(self, games: int, strategy: str = "optimal", seed: int | None = None,
                 batch: int = 50_000) -> np.ndarray:
        """Final totals of `games` solitaire games with random dice, played by `strategy`:
        "optimal" follows this table; "greedy" makes each turn's expected points as large as
        possible and enters the category scoring most now (ties to the row with the lowest
        maximum, so a forced zero costs little)."""
        if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 1:
            raise ValueError(f"the number of games must be a whole number of at least 1, got {games!r}")
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}; choose one of: {', '.join(STRATEGIES)}")
        rng = np.random.default_rng(seed)
        value_after_turn = self._expected_rest if strategy == "optimal" else np.zeros(STATE_COUNT)
        policy = _Policy(value_after_turn, greedy=strategy == "greedy")
        return np.concatenate([
            policy.play(rng, min(batch, games - start)) for start in range(0, games, batch)
        ])


class _Policy:
    """Keep values for every state, and the end-of-turn category choice, of one strategy."""

    def __init__(self, value_after_turn: np.ndarray, greedy: bool):
        # States are rows here: a game's candidate keeps then sit together in memory.
        self._keep_values = np.zeros((ROLLS_PER_TURN - 1, STATE_COUNT, len(MULTISETS)))
        for states in _STATES_BY_USED_COUNT:
            _, before_second, before_last = _turn_tables(states, value_after_turn)
            self._keep_values[0, states] = before_second.T
            self._keep_values[1, states] = before_last.T
        self._value_after_turn = value_after_turn
        # Points are whole numbers, so subtracting a fraction below 1 only breaks ties.
        self._tie_break = (
            np.array([ROW_MAXIMUM[c] for c in CATEGORIES]) / 1000.0 if greedy
            else np.zeros(len(CATEGORIES))
        )

    def play(self, rng: np.random.Generator, games: int) -> np.ndarray:
        states = np.zeros(games, dtype=np.int64)
        totals = np.zeros(games, dtype=np.int64)
        every_game = np.arange(games)
        for _turn in CATEGORIES:
            throws = _roll(rng, np.zeros(games, dtype=np.int64))
            for keep_values in self._keep_values:
                choices = THROW_KEEPS[throws]
                values = keep_values[states[:, None], choices]
                throws = _roll(rng, choices[every_game, values.argmax(axis=1)])
            points = SCORES[throws]
            after = self._value_after_turn[states[:, None] | CATEGORY_BITS] - self._tie_break
            after[(states[:, None] & CATEGORY_BITS) != 0] = -np.inf
            chosen = (points + after).argmax(axis=1)
            totals += points[every_game, chosen].astype(np.int64)
            states |= CATEGORY_BITS[chosen]
        return totals


def _roll(rng: np.random.Generator, keeps: np.ndarray) -> np.ndarray:
    """Throw indices after holding `keeps` (keep indices) and rolling the other dice."""
    faces = rng.integers(0, len(FACES), size=(len(keeps), DICE_PER_ROLL))
    rolled = np.arange(DICE_PER_ROLL) < (DICE_PER_ROLL - KEEP_SIZE[keeps])[:, None]
    return keep_of_code(KEEP_CODE[keeps] + (FACE_CODE[faces] * rolled).sum(axis=1)) - THROW_OFFSET
