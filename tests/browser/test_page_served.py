"""What the table serves for the tablet page, checked without a browser."""

from __future__ import annotations

import json
import re

import pytest
from table_helpers import shutdown, table_app

from webui.app import asset_version
from webui.i18n import LANGUAGES


@pytest.fixture
def client(tmp_path):
    app = table_app(tmp_path)
    yield app.test_client()
    shutdown(app)


def page_config(html: str) -> dict:
    found = re.search(r'<script id="page-config" type="application/json">(.*?)</script>', html, re.S)
    assert found is not None, "the page has no page-config"
    return json.loads(found.group(1))


@pytest.mark.parametrize("path", ["/", "/history"])
def test_the_page_carries_every_language_and_the_rules_limits(client, path):
    response = client.get(path)
    assert response.status_code == 200
    config = page_config(response.get_data(as_text=True))
    assert config["languages"] == list(LANGUAGES)
    assert set(config["catalogs"]) == set(LANGUAGES)
    assert config["categories"][0] == "yacht" and config["categories"][-1] == "ones"
    assert (config["max_players"], config["max_name_length"]) == (8, 24)


def test_everything_the_page_loads_comes_from_the_table(client):
    html = client.get("/").get_data(as_text=True)
    references = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert references, "the page should load its script and style"
    for reference in references:
        assert reference.startswith("/assets/"), f"{reference} is not served by the table"
        assert f"v={asset_version()}" in reference  # a new version is a new URL: no stale script
        assert client.get(reference).status_code == 200

