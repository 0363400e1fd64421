"""Static files are compressed and cache-busted without DEBUG; the favicon; the OpenAPI
servers list follows PORT in development."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.processes import ROOT


@pytest.mark.django_db
def test_static_files_carry_a_content_hash_and_are_served_compressed(client, settings):
    """Hashed names (so browsers may keep them a year) and gzip copies, from collectstatic."""
    assert settings.DEBUG is False
    page = client.get("/accounts/login/").content.decode()
    match = re.search(r"/static/[^\"']+\.[0-9a-f]{12}\.css", page)
    assert match, page
    response = client.get(match.group(0), HTTP_ACCEPT_ENCODING="gzip")
    assert response.status_code == 200
    assert response["Content-Encoding"] == "gzip"
    assert "immutable" in response["Cache-Control"]


@pytest.mark.django_db
def test_pages_link_a_favicon_that_is_served(client):
    page = client.get("/accounts/login/").content.decode()
    match = re.search(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">', page)
    assert match, page
    icon = client.get(match.group(1))
    assert icon.status_code == 200
    assert icon["Content-Type"] == "image/svg+xml"
    assert b"<svg" in b"".join(icon.streaming_content)


@pytest.mark.django_db
def test_favicon_ico_answers_for_pages_that_link_none(client):
    """Browsers ask /favicon.ico on every page without a link (the admin, JSON): no 404."""
    response = client.get("/favicon.ico", follow=True)
    assert response.status_code == 200
    assert response["Content-Type"] in {"image/x-icon", "image/vnd.microsoft.icon"}
    assert b"".join(response.streaming_content)[:4] == b"\x00\x00\x01\x00"  # an ICO file


def _api_base_url(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in {"API_BASE_URL", "PORT", "DEBUG"}}
    command = [sys.executable, "-c", "from petstore import settings; print(settings.API_BASE_URL)"]
    result = subprocess.run(
        command, cwd=ROOT, env={**clean, "PETSTORE_ENV_FILE": "", **env},
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return result.stdout.strip()


def test_the_openapi_servers_follow_port_in_development():
    assert _api_base_url(DEBUG="1", PORT="8123") == "http://localhost:8123/v1"
    assert _api_base_url(DEBUG="1") == "http://localhost:8000/v1"
    assert _api_base_url(DEBUG="0", PORT="8123") == "http://localhost:8000/v1"
