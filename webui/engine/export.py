"""A game as a file to keep: JSON with everything (players, dates, every turn, the journal's actions),
or CSV with one line per turn for a spreadsheet."""

from __future__ import annotations

import csv
import io
from typing import Any

CSV_COLUMNS = ("game", "turn", "player", "throws", "dice", "category", "points", "advised", "advised_points",
               "cost")


def game_record(view: dict[str, Any], summary: dict[str, Any] | None, actions: list[dict[str, Any]]) -> dict[str, Any]:
    """`view`: the game as the tablets see it (Table.game_view); `summary`: its line in the list of
    games (dates), if any; `actions`: its journal."""
    return {
        "id": view["id"], "players": view["players"],
        "started": summary and summary["started"], "finished": summary and summary["finished"],
        "totals": view["totals"], "winners": view["winners"], "sheets": view["sheets"],
        "turns": view["history"], "actions": actions,
    }


def throws_text(throws: list[dict[str, Any]]) -> str:
    """A turn's rolls in a cell: '2 3 4 1 1 | [2] [3] [4] 5 1' (held dice in brackets)."""
    return " | ".join(" ".join(f"[{value}]" if position in throw["held"] else str(value)
                               for position, value in enumerate(throw["dice"])) for throw in throws)


# A spreadsheet runs a cell starting with one of these as a formula; a name typed on a tablet is text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def as_text_cell(text: str) -> str:
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def game_csv(record: dict[str, Any]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for turn in record["turns"]:
        cost, advised_points = turn.get("cost"), turn.get("advised_points")
        writer.writerow([record["id"], turn["turn"], as_text_cell(turn["player_name"]),
                         throws_text(turn.get("throws", [])),
                         " ".join(map(str, turn["dice"])), turn["category"], turn["points"],
                         turn.get("advised") or "", "" if advised_points is None else advised_points,
                         "" if cost is None else f"{cost:.2f}"])
    return out.getvalue()
