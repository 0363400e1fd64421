"""The Django admin issues API keys (shown once), searches, filters and revokes them."""

from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from petstore.apikeys.models import ApiKey
from tests.pets.helpers import assert_error, bearer


@pytest.fixture
def admin_client(client, carol):
    client.force_login(carol)
    return client


def test_an_api_key_added_in_the_admin_is_shown_once_and_works(admin_client, alice):
    response = admin_client.post(
        "/admin/apikeys/apikey/add/", {"user": alice.id, "name": "from-admin"}, follow=True
    )
    assert response.status_code == 200
    shown = re.search(r"(pst_[0-9a-f]{8}_[A-Za-z0-9_-]+)", response.text)
    assert shown
    key = ApiKey.objects.get()
    assert key.name == "from-admin" and key.user == alice

    client = APIClient()
    client.credentials(**bearer(shown.group(1)))
    assert client.get("/v1/pets").status_code == 200
    detail = admin_client.get(f"/admin/apikeys/apikey/{key.id}/change/")
    assert shown.group(1) not in detail.text  # never shown again


def test_keys_are_searchable_and_filterable_and_can_be_revoked(admin_client, alice_key, bob_key):
    page = admin_client.get("/admin/apikeys/apikey/", {"q": "alice"})
    assert alice_key.api_key.prefix in page.text and bob_key.api_key.prefix not in page.text

    response = admin_client.post(
        "/admin/apikeys/apikey/",
        {"action": "revoke", "_selected_action": [alice_key.api_key.id]},
        follow=True,
    )
    assert response.status_code == 200
    assert "Revoked 1 API key" in response.text

    page = admin_client.get("/admin/apikeys/apikey/", {"state": "revoked"})
    assert alice_key.api_key.prefix in page.text and bob_key.api_key.prefix not in page.text
    page = admin_client.get("/admin/apikeys/apikey/", {"state": "active"})
    assert bob_key.api_key.prefix in page.text and alice_key.api_key.prefix not in page.text

    client = APIClient()
    client.credentials(**bearer(alice_key.plaintext))
    assert_error(client.get("/v1/pets"), 401, "unauthorized")


def test_keys_cannot_be_deleted_only_revoked(admin_client, alice_key):
    response = admin_client.get(f"/admin/apikeys/apikey/{alice_key.api_key.id}/delete/")
    assert response.status_code == 403
    assert ApiKey.objects.exists()
