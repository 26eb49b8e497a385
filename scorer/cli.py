"""Subcommands of `yacht-table` that need only the rules: score."""

from __future__ import annotations

import argparse
import json

from .rules import CATEGORIES, score, score_all, validate_dice


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
