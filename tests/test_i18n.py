"""Every language of the tablet page says everything English says, with the category names of
RULES.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorer.rules import CATEGORIES
from webui.i18n import LANGUAGES, REFERENCE_LANGUAGE, load_catalog

RULES = Path(__file__).resolve().parents[1].parent / "shared" / "RULES.md"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


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


def _placeholders(text: str) -> set[str]:
    return set(_PLACEHOLDER.findall(text))


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_catalogue_is_complete(language):
    assert catalog_problems(language) == []


def test_english_names_every_category():
    english = load_catalog(REFERENCE_LANGUAGE)
    assert all(f"cat.{category}" in english for category in CATEGORIES)


def test_every_note_the_table_sends_has_words():
    """The camera's notes are worded by the page from "note.<code>"; a code without words would show
    as the key itself. (Every language has every English key: the test above.)"""
    from vision.reading import PROBLEM_KINDS

    service = Path(__file__).resolve().parents[1] / "webui" / "engine" / "table.py"
    sent = {kind for kind in PROBLEM_KINDS if kind != "other"}  # "other" carries its own text
    sent |= set(re.findall(r'"code": "(\w+)"', service.read_text()))
    assert len(sent) >= 11
    english = load_catalog(REFERENCE_LANGUAGE)
    assert sorted(code for code in sent if f"note.{code}" not in english) == []


def _rules_names() -> dict[str, dict[str, str]]:
    """The 'Names in the seed languages' table of RULES.md: {language: {category: name}}."""
    if not RULES.exists():
        pytest.skip(f"{RULES} is absent: the category names cannot be checked against it")
    text = RULES.read_text(encoding="utf-8")
    section = text[text.index("## Names in the seed languages"):]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    header, rows = lines[0], lines[2:]  # lines[1] is the |---| separator
    languages = [cell.strip().split()[0] for cell in header.strip("|").split("|")][1:]
    names: dict[str, dict[str, str]] = {language: {} for language in languages}
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        category = cells[0].strip("`")
        for language, name in zip(languages, cells[1:]):
            names[language][category] = name
    return names


@pytest.mark.parametrize("language", LANGUAGES)
def test_category_names_are_those_of_the_rules(language):
    expected = _rules_names()[language]
    assert set(expected) == set(CATEGORIES)
    catalog = load_catalog(language)
    assert {category: catalog[f"cat.{category}"] for category in CATEGORIES} == expected


def test_serbian_is_written_in_cyrillic():
    latin = re.compile(r"[A-Za-z]")
    serbian = load_catalog("sr")
    # Placeholders such as {name}, and a plural's "{count, plural, one {...} other {...}}", are code.
    code = re.compile(r"\{\w+\}|\{\w+, plural,|\b(?:zero|one|two|few|many|other)\s*\{")
    words = {key: code.sub("", text) for key, text in serbian.items()}
    assert {key: text for key, text in words.items() if latin.search(text)} == {}


def test_unknown_language_is_refused():
    with pytest.raises(ValueError, match="unknown language 'de'"):
        load_catalog("de")


texts = st.text(alphabet=st.characters(categories=["L", "Zs"]), min_size=1, max_size=12).filter(str.strip)
catalogues = st.dictionaries(st.from_regex(r"[a-z_.]{1,10}", fullmatch=True), texts, min_size=1, max_size=8)


@given(catalogues, st.data())
def test_a_dropped_or_altered_entry_is_reported(reference, data):
    assert compare_catalogs(reference, dict(reference), "xx") == []
    key = data.draw(st.sampled_from(sorted(reference)))

    dropped = {k: v for k, v in reference.items() if k != key}
    assert compare_catalogs(reference, dropped, "xx") == [f"xx: missing {key!r}"]

    emptied = dict(reference, **{key: " "})
    assert compare_catalogs(reference, emptied, "xx") == [f"xx: {key!r} is empty"]

    with_placeholder = dict(reference, **{key: reference[key] + " {n}"})
    assert len(compare_catalogs(reference, with_placeholder, "xx")) == 1

    extra = dict(reference, **{"zz_not_in_reference": "x"})
    assert compare_catalogs(reference, extra, "xx") == ["xx: 'zz_not_in_reference' is not in English"]
