"""Where the table keeps its files (game database, advisor cache)."""

from __future__ import annotations

import os
from pathlib import Path

DATA_DIR_ENV = "YACHT_TABLE_DATA_DIR"


def data_dir() -> Path:
    """$YACHT_TABLE_DATA_DIR, else $XDG_DATA_HOME/yacht-table, else ~/.local/share/yacht-table."""
    explicit = os.environ.get(DATA_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "yacht-table"
