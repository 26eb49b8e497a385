"""The dice space of one turn as numpy tables: every multiset of up to five dice and how a keep
becomes a throw. Order never matters in Yacht, so a throw is a multiset (252 of them) and a keep is
a multiset of at most five dice (462, the throws included: keeping all five means stopping).

Multisets are numbered by size, then by their sorted faces, so the throws are the last 252 and
throw t is keep THROW_OFFSET + t.
"""

from __future__ import annotations

from itertools import combinations_with_replacement
from math import factorial

import numpy as np

from .rules import DICE_PER_ROLL, FACES

FACE_COUNT = len(FACES)

MULTISETS: tuple[tuple[int, ...], ...] = tuple(
    faces
    for size in range(DICE_PER_ROLL + 1)
    for faces in combinations_with_replacement(FACES, size)
)
KEEP_COUNT = len(MULTISETS)
THROW_OFFSET = sum(1 for faces in MULTISETS if len(faces) < DICE_PER_ROLL)
THROWS = MULTISETS[THROW_OFFSET:]
THROW_COUNT = len(THROWS)

# KEEP_FACE_COUNTS[k, f] = how many dice showing FACES[f] keep k holds.
KEEP_FACE_COUNTS = np.array(
    [[faces.count(face) for face in FACES] for faces in MULTISETS], dtype=np.int64
)
KEEP_SIZE = KEEP_FACE_COUNTS.sum(axis=1)

# Face counts are at most 5, so base 6 encodes each multiset as a unique small integer, and adding
# a die showing FACES[f] adds FACE_CODE[f] to the code.
FACE_CODE = (DICE_PER_ROLL + 1) ** np.arange(FACE_COUNT)
KEEP_CODE = KEEP_FACE_COUNTS @ FACE_CODE
_KEEP_OF_CODE = np.full((DICE_PER_ROLL + 1) ** FACE_COUNT, -1, dtype=np.int64)
_KEEP_OF_CODE[KEEP_CODE] = np.arange(KEEP_COUNT)


def keep_of_code(codes: np.ndarray) -> np.ndarray:
    """Keep indices of an array of multiset codes."""
    return _KEEP_OF_CODE[codes]


def keep_of_faces(faces: tuple[int, ...]) -> int:
    """Keep index of a multiset of at most five valid faces, in any order."""
    return int(_KEEP_OF_CODE[sum(FACE_CODE[FACES.index(face)] for face in faces)])


# Probability of each throw when all five dice are rolled: 5! / prod(count!) orderings of 6^5.
FIRST_ROLL = np.array(
    [factorial(DICE_PER_ROLL) / np.prod([factorial(c) for c in counts]) for counts in
     KEEP_FACE_COUNTS[THROW_OFFSET:]]
) / float(FACE_COUNT) ** DICE_PER_ROLL


def _sub_multisets(faces: tuple[int, ...]) -> list[tuple[int, ...]]:
    subs: set[tuple[int, ...]] = {()}
    for face in faces:
        subs |= {tuple(sorted(sub + (face,))) for sub in subs}
    return sorted(subs, key=lambda sub: (len(sub), sub))


def _padded(rows: list[list[int]]) -> np.ndarray:
    """Rows of different lengths as one array, each short row padded with its own first entry
    (harmless for the max that every use of these tables takes)."""
    width = max(map(len, rows))
    return np.array([row + [row[0]] * (width - len(row)) for row in rows], dtype=np.int64)


# Every distinct keep a player holding throw t can choose (at most 32), and how many there are.
_THROW_KEEP_LISTS = [[keep_of_faces(sub) for sub in _sub_multisets(throw)] for throw in THROWS]
THROW_KEEPS = _padded(_THROW_KEEP_LISTS)
THROW_KEEP_COUNT = np.array([len(keeps) for keeps in _THROW_KEEP_LISTS], dtype=np.int64)


def _one_die_fewer(faces: tuple[int, ...]) -> list[int]:
    return sorted({keep_of_faces(faces[:i] + faces[i + 1:]) for i in range(len(faces))})


def _of_size(size: int) -> range:
    """Keeps of one size: a contiguous block, since multisets are numbered by size first."""
    first = sum(1 for faces in MULTISETS if len(faces) < size)
    return range(first, first + sum(1 for faces in MULTISETS if len(faces) == size))


# For each size s >= 1: the block of keeps of that size and, for each, the keeps with one die
# fewer. Sweeping sizes upwards turns "best keep inside each throw" into maxima over at most five.
_ONE_FEWER_STEPS = tuple(
    (
        slice(_of_size(size).start, _of_size(size).stop),
        _padded([_one_die_fewer(MULTISETS[k]) for k in _of_size(size)]).T.copy(),
    )
    for size in range(1, DICE_PER_ROLL + 1)
)

# For each size s < 5, from 4 down to 0: the block of keeps of that size and, for each, the six
# keeps with one more die (one per face). Rolling the missing dice one at a time gives the same
# throws with the same chances as rolling them together, so a keep's value is the mean of the six.
_ONE_MORE_STEPS = tuple(
    (
        slice(_of_size(size).start, _of_size(size).stop),
        np.array([[keep_of_faces(MULTISETS[k] + (face,)) for k in _of_size(size)] for face in FACES]),
    )
    for size in range(DICE_PER_ROLL - 1, -1, -1)
)


def best_keep_value(keep_values: np.ndarray) -> np.ndarray:
    """(462, n) value of each keep -> (252, n) value of each throw when the best keep inside it
    is held. Keeps are rows so that every gather copies whole contiguous rows."""
    best = keep_values.copy()
    for block, fewer_by_column in _ONE_FEWER_STEPS:
        for fewer in fewer_by_column:
            np.maximum(best[block], best[fewer], out=best[block])
    return best[THROW_OFFSET:]


def expected_keep_value(throw_values: np.ndarray) -> np.ndarray:
    """(252, n) value of each throw -> (462, n) expected value of each keep when the dice not
    held are rolled (a throw kept whole is worth its own value)."""
    values = np.empty((KEEP_COUNT,) + throw_values.shape[1:])
    values[THROW_OFFSET:] = throw_values
    for block, more_by_face in _ONE_MORE_STEPS:
        total = values[block]
        total[...] = values[more_by_face[0]]
        for more in more_by_face[1:]:
            total += values[more]
        total /= len(more_by_face)
    return values
