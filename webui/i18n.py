"""The tablet page's words, one JSON catalogue per language, English being the reference.

The catalogues live in static/i18n/ so the page can be served as plain files; this module loads them
(tests/test_i18n.py checks that each says everything English says).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

LANGUAGES = ("en", "fr", "pt", "ht", "sr")
REFERENCE_LANGUAGE = "en"
CATALOG_DIR = Path(__file__).parent / "static" / "i18n"


@cache
def load_catalog(language: str) -> dict[str, str]:
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; known: {', '.join(LANGUAGES)}")
    path = CATALOG_DIR / f"{language}.json"
    with path.open(encoding="utf-8") as file:
        catalog = json.load(file)
    if not isinstance(catalog, dict) or not all(
        isinstance(key, str) and isinstance(text, str) for key, text in catalog.items()
    ):
        raise ValueError(f"{path} must be one JSON object of text entries")
    return catalog


def all_catalogs() -> dict[str, dict[str, str]]:
    return {language: load_catalog(language) for language in LANGUAGES}
