"""The tablet page's words, one JSON catalogue per language, English being the reference.

The catalogues live in static/i18n/ so the page can be served as plain files; this module loads them
and says what a catalogue lacks, which is what keeps every language complete.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

LANGUAGES = ("en", "fr", "pt", "ht", "sr")
REFERENCE_LANGUAGE = "en"
CATALOG_DIR = Path(__file__).parent / "static" / "i18n"

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@lru_cache(maxsize=None)
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


def catalog_problems(language: str) -> list[str]:
    """Everything that keeps `language`'s catalogue from saying what the English one says."""
    return compare_catalogs(load_catalog(REFERENCE_LANGUAGE), load_catalog(language), language)


def compare_catalogs(reference: dict[str, str], catalog: dict[str, str], language: str) -> list[str]:
    """Missing, extra or empty entries, and entries whose {placeholders} differ from the reference's."""
    problems = [f"{language}: missing {key!r}" for key in reference if key not in catalog]
    problems += [f"{language}: {key!r} is not in English" for key in catalog if key not in reference]
    for key, text in catalog.items():
        if not text.strip():
            problems.append(f"{language}: {key!r} is empty")
        elif key in reference and _placeholders(text) != _placeholders(reference[key]):
            problems.append(
                f"{language}: {key!r} uses {sorted(_placeholders(text))}, "
                f"English uses {sorted(_placeholders(reference[key]))}"
            )
    return problems


def all_catalogs() -> dict[str, dict[str, str]]:
    return {language: load_catalog(language) for language in LANGUAGES}


def _placeholders(text: str) -> set[str]:
    return set(_PLACEHOLDER.findall(text))
