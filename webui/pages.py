"""The tablet page: one HTML page for "/" and "/history", its script, style and translations.

Everything is served by the table itself (no CDN: the table may have no internet). Asset URLs carry
a hash of the files so a tablet never keeps running an old script after the table is updated.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from flask import Blueprint, render_template

from scorer.game import MAX_NAME_LENGTH, MAX_PLAYERS
from scorer.rules import CATEGORIES

from .i18n import LANGUAGES, all_catalogs

STATIC_DIR = Path(__file__).parent / "static"

pages = Blueprint(
    "pages",
    __name__,
    template_folder="templates",
    static_folder="static",
    static_url_path="/assets",
)


@lru_cache(maxsize=1)
def asset_version() -> str:
    digest = hashlib.sha256()
    for path in sorted(STATIC_DIR.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(STATIC_DIR).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


@pages.get("/")
@pages.get("/history")
def tablet_page():
    return render_template(
        "tablet.html",
        asset_version=asset_version(),
        page_config={
            "languages": list(LANGUAGES),
            "categories": list(CATEGORIES),
            "max_players": MAX_PLAYERS,
            "max_name_length": MAX_NAME_LENGTH,
            "catalogs": all_catalogs(),
        },
    )
