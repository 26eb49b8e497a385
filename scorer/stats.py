"""Each player's record across finished games: games played, average and best total, Yachts scored
and games won. Players are told apart by name, as the table's start screen names them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .game import Game
from .rules import score

YACHT_POINTS = score([6, 6, 6, 6, 6], "yacht")


@dataclass(frozen=True)
class PlayerStats:
    name: str
    games: int
    average: float
    best: int
    yachts: int
    wins: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "games": self.games, "average": self.average, "best": self.best,
                "yachts": self.yachts, "wins": self.wins}


def player_stats(games: Iterable[Game]) -> list[PlayerStats]:
    """Statistics over the finished `games` (unfinished ones are left out), most games first, then
    by name."""
    totals: dict[str, list[int]] = {}
    yachts: dict[str, int] = {}
    wins: dict[str, int] = {}
    for game in games:
        if not game.is_over:
            continue
        for name, sheet, total in zip(game.players, game.sheets, game.totals):
            totals.setdefault(name, []).append(total)
            yachts[name] = yachts.get(name, 0) + (sheet.get("yacht") == YACHT_POINTS)
            wins[name] = wins.get(name, 0) + (name in game.winners)
    stats = [PlayerStats(name, len(scores), sum(scores) / len(scores), max(scores), yachts[name], wins[name])
             for name, scores in totals.items()]
    return sorted(stats, key=lambda player: (-player.games, player.name.casefold()))
