"""Kept dice: how a throw of some of the dice becomes the turn's next roll of five.

Between throws a player holds dice (by their positions in the roll shown) and throws the rest: k
dice thrown with 5-k held make the roll, the held dice keep their places and the thrown ones fill
the others. When the camera sees k < 5 dice and the holds do not say which were kept aside,
`kept_choices` lists every roll that could be meant, for the player to pick with one tap. When it
sees five, `tray_choices` tells the dice that lay still from the dice thrown, by where they lie.

Everything here is pure: dice values and die places in, possible rolls out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Protocol

from .rules import DICE_PER_ROLL, validate_dice, validate_die

POSITIONS = tuple(range(DICE_PER_ROLL))


class HoldError(ValueError):
    """Holds or thrown dice that cannot make a roll; the message says why."""


def validate_positions(positions: object) -> tuple[int, ...]:
    """Distinct die positions (0 to 4) as a sorted tuple, or HoldError saying what is wrong."""
    if isinstance(positions, (str, bytes)) or not isinstance(positions, Sequence):
        raise HoldError("positions must be a list of die positions from 0 to 4")
    checked = []
    for position in positions:
        if isinstance(position, bool) or not isinstance(position, int) or position not in POSITIONS:
            raise HoldError(f"a die position is a whole number from 0 to {DICE_PER_ROLL - 1}, "
                            f"got {position!r}")
        if position in checked:
            raise HoldError(f"die position {position} is given twice")
        checked.append(position)
    return tuple(sorted(checked))


def validate_thrown(values: object) -> tuple[int, ...]:
    """The values of 1 to 5 thrown dice, or HoldError saying what is wrong."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise HoldError("dice must be a list of the thrown dice's values")
    if not 1 <= len(values) <= DICE_PER_ROLL:
        raise HoldError(f"a throw is of 1 to {DICE_PER_ROLL} dice, got {len(values)}")
    try:
        return tuple(validate_die(value, position) for position, value in enumerate(values))
    except ValueError as error:
        raise HoldError(str(error)) from None


def compose_roll(previous: Sequence[int], held: Sequence[int], thrown: Sequence[int]) -> tuple[int, ...]:
    """The roll made by throwing `thrown` with the dice at positions `held` of `previous` kept: the
    held dice keep their places and the thrown ones fill the other places in the order given."""
    if len(thrown) != DICE_PER_ROLL - len(held):
        kept = f"{len(held)} {'die' if len(held) == 1 else 'dice'} held"
        raise HoldError(f"{kept}, so {DICE_PER_ROLL - len(held)} must be thrown; got {len(thrown)}")
    fresh = iter(thrown)
    return tuple(previous[position] if position in held else next(fresh) for position in POSITIONS)


def check_held(previous: Sequence[int] | None, held: Sequence[int], dice: Sequence[int]) -> None:
    """HoldError unless every held die shows in `dice` what it showed in `previous`: a roll's record
    must be a roll that could have been made from the one before."""
    if not held:
        return
    if previous is None:
        raise HoldError("a turn's first throw is all five dice: there is nothing to hold yet")
    changed = [p for p in held if dice[p] != previous[p]]
    if changed:
        raise HoldError(f"held dice keep their values; die {changed[0]} showed {previous[changed[0]]}, "
                        f"not {dice[changed[0]]}")


@dataclass(frozen=True)
class KeptChoice:
    """One roll the player may have meant: the positions of the last roll kept, and the five dice.
    Holding all five means nothing was thrown. `lying`: for each position, the index among the dice
    seen of the die that lies there now (None for a die set aside, or with no camera), so the next
    throw can be told apart from this one by where the dice lie."""

    held: tuple[int, ...]
    dice: tuple[int, ...]
    advised: bool = False
    lying: tuple[int | None, ...] = field(default=(), compare=False)

    @property
    def thrown(self) -> tuple[int, ...]:
        return tuple(p for p in POSITIONS if p not in self.held)

    def to_dict(self) -> dict[str, object]:
        return {"held": list(self.held), "dice": list(self.dice), "advised": self.advised}

    @property
    def nothing_thrown(self) -> bool:
        return len(self.held) == DICE_PER_ROLL


def _thrown_lying(held: Sequence[int]) -> tuple[int | None, ...]:
    """The dice seen fill the positions not held, in order; the held ones lie out of view."""
    fresh = iter(range(DICE_PER_ROLL))
    return tuple(None if p in held else next(fresh) for p in POSITIONS)


def _positions_keeping(values: tuple[int, ...], previous: Sequence[int], holds: Sequence[int]) -> tuple[int, ...]:
    """Positions in `previous` showing `values`, the currently held ones first, so a choice moves
    as few holds as it can."""
    wanted = list(values)
    chosen = []
    for position in sorted(POSITIONS, key=lambda p: (p not in holds, p)):
        if previous[position] in wanted:
            wanted.remove(previous[position])
            chosen.append(position)
    return tuple(sorted(chosen))


def kept_choices(previous: Sequence[int], thrown: Sequence[int], holds: Sequence[int] = (),
                 ranked_keeps: Sequence[Sequence[int]] = ()) -> tuple[KeptChoice, ...]:
    """Every roll a throw of `thrown` (k < 5 dice, in the order they are to be placed) can make from
    the `previous` roll, the other 5-k dice kept aside.

    Holds of the right number say which were kept: one choice. Otherwise one choice per distinct set
    of kept values, most likely first: the advisor's keep of that size (the first of `ranked_keeps`,
    its keeps best first, that fits), then those fewest taps away from the holds, then in the
    advisor's order. One choice alone is no guess: any way of keeping gives the same roll."""
    previous = validate_dice(previous)
    thrown = validate_thrown(thrown)
    holds = validate_positions(holds)
    kept_count = DICE_PER_ROLL - len(thrown)
    if kept_count == 0:
        return (KeptChoice((), thrown, lying=_thrown_lying(())),)
    if len(holds) == kept_count:
        return (KeptChoice(holds, compose_roll(previous, holds, thrown), lying=_thrown_lying(holds)),)
    keeps = {tuple(sorted(previous[p] for p in chosen)) for chosen in combinations(POSITIONS, kept_count)}
    rank = {tuple(sorted(keep)): i for i, keep in reversed(list(enumerate(ranked_keeps)))}
    advised = min(keeps, key=lambda keep: rank.get(keep, len(rank))) if keeps & rank.keys() else None

    def likelihood(keep: tuple[int, ...]) -> tuple[bool, int, int, tuple[int, ...]]:
        held = _positions_keeping(keep, previous, holds)
        taps = len(set(held) ^ set(holds))
        return keep != advised, taps, rank.get(keep, len(rank)), tuple(-v for v in keep)

    choices = []
    for keep in sorted(keeps, key=likelihood):
        held = _positions_keeping(keep, previous, holds)
        choices.append(KeptChoice(held, compose_roll(previous, held, thrown), advised=keep == advised,
                                  lying=_thrown_lying(held)))
    return tuple(choices)


class Placed(Protocol):
    """A die as the camera saw it: its value and where it lies (pixels), as vision.Die has them."""

    @property
    def value(self) -> int | None: ...

    @property
    def x(self) -> float: ...

    @property
    def y(self) -> float: ...

    @property
    def size(self) -> float: ...

    @property
    def angle(self) -> float: ...


# A die seen with another face where one lay is asked about only when it lies exactly as that one
# did: this close, and turned alike (a square's angle repeats every 90 degrees). A thrown die that
# merely comes to rest on a vacated spot lies off by more, at any angle, and is just thrown.
SAME_SPOT = 0.25  # of the die's size, across and down
SAME_TURN_DEGREES = 10.0


def lies_exactly_as(before: Placed, after: Placed) -> bool:
    turned = abs(before.angle - after.angle) % 90.0
    return (abs(before.x - after.x) < after.size * SAME_SPOT and abs(before.y - after.y) < after.size * SAME_SPOT
            and min(turned, 90.0 - turned) < SAME_TURN_DEGREES)


def same_place(before: Placed, after: Placed) -> bool:
    """`after` lies where `before` lay: off by less than half its size across and down (a die
    picked up and thrown lands elsewhere; one left alone is seen again within a pixel or two)."""
    return abs(before.x - after.x) < after.size / 2 and abs(before.y - after.y) < after.size / 2


def match_places(before: Sequence[Placed], after: Sequence[Placed]) -> dict[int, int]:
    """For each die of `after` lying where a die of `before` lay, its index -> that die's index;
    each die of `before` is matched at most once, nearest first."""
    pairs = sorted(
        ((a.x - b.x) ** 2 + (a.y - b.y) ** 2, j, i)
        for j, a in enumerate(after) for i, b in enumerate(before) if same_place(b, a)
    )
    matched: dict[int, int] = {}
    for _, j, i in pairs:
        if j not in matched and i not in matched.values():
            matched[j] = i
    return matched


def same_scene(before: Sequence[Placed], after: Sequence[Placed]) -> bool:
    """The same dice showing the same faces in the same places: a scene seen again, not a throw."""
    if len(before) != len(after):
        return False
    matched = match_places(before, after)
    return len(matched) == len(after) and all(after[j].value == before[i].value for j, i in matched.items())


@dataclass(frozen=True)
class TrayThrow:
    """Five dice seen after a throw, told apart by where they lie against the last roll's dice.

    unmoved: positions whose die lies where it lay, showing what it showed. bumped: positions whose
    die lies where it lay but shows another face (knocked by a thrown die, or misread), with the face
    it shows now. thrown: the values of the other dice, in the order they are to be placed. lying:
    for each position, the index among the dice seen of the die lying there now."""

    unmoved: tuple[int, ...]
    bumped: dict[int, int]
    thrown: tuple[int, ...]
    lying: tuple[int, ...] = ()

    def choices(self, previous: Sequence[int]) -> tuple[KeptChoice, ...]:
        """The rolls this throw can make: one when no kept die changed its face; otherwise first
        with the bumped dice put back as they were, then with them counted as they lie now. Holding
        all five (every die in its place) means nothing was thrown."""
        fresh = iter(self.thrown)
        as_they_lie = tuple(
            previous[p] if p in self.unmoved else self.bumped[p] if p in self.bumped else next(fresh)
            for p in POSITIONS)
        if not self.bumped:
            return (KeptChoice(self.unmoved, as_they_lie, lying=self.lying),)
        put_back = tuple(sorted((*self.unmoved, *self.bumped)))
        return (KeptChoice(put_back, compose_roll(previous, put_back, self.thrown), lying=self.lying),
                KeptChoice(self.unmoved, as_they_lie, lying=self.lying))


def tray_throw(previous: Sequence[int], places: Mapping[int, Placed], seen: Sequence[Placed]) -> TrayThrow:
    """Five dice `seen` (in the order new dice are to be placed) against `places`: where the dice of
    the `previous` roll lay, by position (the positions the camera saw; dice entered by hand have
    no place, and count as thrown)."""
    try:
        values = validate_dice([die.value for die in seen])
    except ValueError as error:
        raise HoldError(f"telling kept dice by their places takes five dice read: {error}") from None
    positions = list(places)
    matched = match_places([places[p] for p in positions], seen)
    unmoved, bumped = [], {}
    lying: dict[int, int] = {}
    for j, i in list(matched.items()):
        if values[j] == previous[positions[i]]:
            unmoved.append(positions[i])
        elif lies_exactly_as(places[positions[i]], seen[j]):
            bumped[positions[i]] = values[j]
        else:
            del matched[j]  # a thrown die that came to rest near where another lay
            continue
        lying[positions[i]] = j
    fresh = iter(j for j in range(DICE_PER_ROLL) if j not in matched)
    thrown_at = {p: next(fresh) for p in POSITIONS if p not in lying}
    thrown = tuple(values[j] for _, j in sorted(thrown_at.items()))
    lying.update(thrown_at)
    return TrayThrow(tuple(sorted(unmoved)), bumped, thrown, tuple(lying[p] for p in POSITIONS))


def throw_choices(previous: Sequence[int] | None, holds: Sequence[int], places: Mapping[int, Placed],
                  seen: Sequence[Placed], ranked_keeps: Sequence[Sequence[int]] = ()) -> tuple[KeptChoice, ...]:
    """The rolls a throw the camera saw can make: `seen` are the dice in the tray (in the order new
    dice are to be placed), `previous` the turn's roll so far (None before its first throw), `holds`
    its held positions and `places` where its dice lay (by position). Five dice are told apart by
    where they lie; fewer complete the roll with the dice kept aside. HoldError when the throw can
    make no roll: a turn's first throw of fewer than five dice."""
    if previous is None:
        if len(seen) != DICE_PER_ROLL:
            raise HoldError(f"a turn's first throw is all five dice; {len(seen)} seen")
        values = validate_dice([die.value for die in seen])
        return (KeptChoice((), values, lying=_thrown_lying(())),)
    if len(seen) == DICE_PER_ROLL:
        return tray_throw(previous, places, seen).choices(previous)
    return kept_choices(previous, validate_thrown([die.value for die in seen]), holds, ranked_keeps)
