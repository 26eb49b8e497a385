"""Subcommands of `yacht-table` for the rules and the advisor: score, advise, simulate."""

from __future__ import annotations

import argparse
import json

from .rules import CATEGORIES, score, score_all, validate_category, validate_dice


def parse_dice(text: str) -> tuple[int, ...]:
    """'4,4,4,4,1' (commas, spaces or dashes between faces) as five validated faces."""
    parts = [p for p in text.replace("-", ",").replace(" ", ",").split(",") if p]
    faces = []
    for part in parts:
        try:
            faces.append(int(part))
        except ValueError:
            raise ValueError(f"dice must be whole numbers from 1 to 6, got {part!r}") from None
    return validate_dice(faces)


def add_commands(commands: argparse._SubParsersAction) -> None:
    score_parser = commands.add_parser(
        "score",
        help="what a roll scores in one category, or in all twelve",
        description="Print what five dice score in CATEGORY, or in every category.",
    )
    score_parser.add_argument("dice", help="five faces, e.g. 4,4,4,4,1")
    score_parser.add_argument("category", nargs="?", help=f"one of: {', '.join(CATEGORIES)}")
    score_parser.add_argument("--json", action="store_true", help="print JSON")
    score_parser.set_defaults(run=run_score)

    advise_parser = commands.add_parser(
        "advise",
        help="the best keep and category for a position, by exact optimal play",
        description="Print the best dice to keep and the best category for DICE after roll ROLL, "
        "with each option's ev: the expected score of the rest of the solitaire game, this "
        "turn's points included. With --expected, print the optimal expected score of a whole game.",
    )
    advise_parser.add_argument("dice", nargs="?", help="five faces, e.g. 1,2,2,4,6")
    advise_parser.add_argument("--roll", type=int, default=1, help="which roll of the turn the dice "
                               "come from, 1 to 3 (default 1)")
    advise_parser.add_argument("--used", default="", help="comma-separated categories already "
                               "filled in, e.g. full_house,choice")
    advise_parser.add_argument("--expected", action="store_true",
                               help="print the optimal expected score of a whole game")
    advise_parser.add_argument("--cache-dir", help="where the strategy table is cached "
                               "(default: the data directory)")
    advise_parser.add_argument("--json", action="store_true", help="print JSON")
    advise_parser.set_defaults(run=run_advise)

    simulate_parser = commands.add_parser(
        "simulate",
        help="play many solitaire games with random dice and report the scores",
        description="Play GAMES solitaire games with random dice using STRATEGY; print the mean, "
        "standard deviation and standard error of the final score.",
    )
    simulate_parser.add_argument("--games", type=int, default=10_000, help="default 10000")
    simulate_parser.add_argument("--strategy", default="optimal",
                                 help="optimal (exact best play) or greedy (most points this turn)")
    simulate_parser.add_argument("--seed", type=int, help="seed for repeatable dice")
    simulate_parser.add_argument("--cache-dir", help="where the strategy table is cached")
    simulate_parser.add_argument("--json", action="store_true", help="print JSON")
    simulate_parser.set_defaults(run=run_simulate)


def run_score(args: argparse.Namespace) -> int:
    dice = parse_dice(args.dice)
    if args.category is not None:
        points = score(dice, args.category)
        print(json.dumps({"dice": list(dice), "category": args.category, "score": points})
              if args.json else points)
        return 0
    scores = score_all(dice)
    if args.json:
        print(json.dumps({"dice": list(dice), "scores": scores}))
    else:
        width = max(map(len, CATEGORIES))
        for category, points in scores.items():
            print(f"{category:<{width}}  {points:>2}")
    return 0


def _parse_used(text: str) -> list[str]:
    return [validate_category(part.strip()) for part in text.split(",") if part.strip()]


def run_advise(args: argparse.Namespace) -> int:
    # numpy and the strategy table load only for the commands that need them.
    from .advisor import Advisor

    if args.expected:
        if args.dice is not None or args.used:
            raise ValueError("--expected is the score of a whole game: give it no dice and no --used")
        expected = Advisor.load(args.cache_dir).expected_game
        print(json.dumps({"expected_score": expected}) if args.json else f"{expected:.2f}")
        return 0
    if args.dice is None:
        raise ValueError("give the five dice (e.g. 1,2,2,4,6), or --expected")
    dice = parse_dice(args.dice)
    used = _parse_used(args.used)
    advice = Advisor.load(args.cache_dir).advise(used, dice, args.roll)
    if args.json:
        print(json.dumps(advice.to_dict()))
        return 0
    print(f"dice {_faces(advice.dice)}, roll {advice.roll_number} of 3, "
          f"{len(advice.categories)} categories open")
    print("ev = expected score of the rest of the game, this turn included")
    if advice.best_keep is not None:
        what = "stop and score" if advice.stop else f"keep {_faces(advice.best_keep) or 'nothing'}"
        print(f"best keep: {what}  (ev {advice.keep_ev:.2f})")
        for keep, ev in advice.keeps[1:4]:
            print(f"    then: keep {_faces(keep) or 'nothing'}  (ev {ev:.2f})")
    lead = "best category" if advice.rolls_left == 0 else "best category if you stop now"
    print(f"{lead}: {advice.best_category} for {advice.category_points}  "
          f"(ev {advice.category_ev:.2f})")
    for category, points, ev in advice.categories[1:4]:
        print(f"    then: {category} for {points}  (ev {ev:.2f})")
    greedy_category, greedy_points, greedy_ev = advice.greedy[0]
    print(f"most points now: {greedy_category} for {greedy_points}  (ev {greedy_ev:.2f})")
    return 0


def _faces(faces: tuple[int, ...]) -> str:
    return "-".join(map(str, faces))


def run_simulate(args: argparse.Namespace) -> int:
    import numpy as np

    from .advisor import Advisor

    seed = args.seed if args.seed is not None else int(np.random.default_rng().integers(2**32))
    totals = Advisor.load(args.cache_dir).simulate(args.games, args.strategy, seed)
    mean = float(totals.mean())
    std = float(totals.std(ddof=1)) if len(totals) > 1 else 0.0
    error = std / len(totals) ** 0.5
    if args.json:
        print(json.dumps({"strategy": args.strategy, "games": len(totals), "seed": seed,
                          "mean": mean, "std": std, "standard_error": error}))
    else:
        print(f"{args.strategy}: {len(totals)} games, seed {seed}")
        print(f"mean {mean:.2f}  standard deviation {std:.2f}  standard error {error:.2f}")
    return 0
