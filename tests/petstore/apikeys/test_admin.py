"""The Django admin issues API keys (shown once, on the page that answers the form, never in
a cookie or a message), searches, filters and revokes them."""

from __future__ import annotations

import re

import pytest
from django.contrib.messages import get_messages
from django.contrib.sessions.models import Session
from rest_framework.test import APIClient

from domains.choices import Role
from domains.models import Membership, ProjectKey
from petstore.apikeys.models import ApiKey
from tests.pets.helpers import assert_error, bearer


@pytest.fixture
def admin_client(client, carol):
    client.force_login(carol)
    return client


ISSUE_TOKEN = re.compile(r'name="issue_token" value="([^"]+)"')
KEY = re.compile(r"pst_[0-9a-f]{8}_[0-9A-Za-z]{49}")


def add_form(admin_client, **fields):
    """The add form's fields as a browser sends them: its one-time token included."""
    page = admin_client.get("/admin/apikeys/apikey/add/")
    token = ISSUE_TOKEN.search(page.text)
    assert token, "the add form carries a one-time token"
    scopes = ["pets:read", "pets:write"]
    return {"scopes": scopes, "days": 90, **fields, "issue_token": token.group(1)}


def test_an_api_key_added_in_the_admin_is_shown_on_the_page_that_answers_the_form(
    admin_client, alice
):
    form = add_form(admin_client, user=alice.id, name="from-admin")
    response = admin_client.post("/admin/apikeys/apikey/add/", form)
    # No redirect: nothing has to carry the key to another page.
    assert response.status_code == 200
    shown = set(KEY.findall(response.text))
    assert len(shown) == 1
    plaintext = shown.pop()
    assert "no-store" in response["Cache-Control"]
    # In this page's body only: in no cookie, no message, not the session.
    assert all(plaintext not in morsel.OutputString() for morsel in response.cookies.values())
    assert "messages" not in response.cookies
    assert all(plaintext not in str(m) for m in get_messages(response.wsgi_request))
    session = Session.objects.get(session_key=admin_client.session.session_key)
    assert plaintext not in session.session_data
    assert plaintext not in str(session.get_decoded())

    key = ApiKey.objects.get()
    assert key.name == "from-admin" and key.user == alice
    client = APIClient()
    client.credentials(**bearer(plaintext))
    assert client.get("/v1/pets").status_code == 200
    for page in (f"/admin/apikeys/apikey/{key.id}/change/", "/admin/apikeys/apikey/"):
        assert plaintext not in admin_client.get(page).text  # never shown again


def test_the_form_sent_again_makes_no_second_key_and_shows_none(admin_client, alice):
    form = add_form(admin_client, user=alice.id, name="from-admin")
    assert admin_client.post("/admin/apikeys/apikey/add/", form).status_code == 200
    again = admin_client.post("/admin/apikeys/apikey/add/", form)  # a reload of that page
    assert again.status_code == 409
    assert not KEY.search(again.text)
    assert "no key was made" in again.text
    assert ApiKey.objects.count() == 1


def test_a_form_without_its_token_makes_no_key(admin_client, alice):
    response = admin_client.post("/admin/apikeys/apikey/add/", {"user": alice.id, "name": "x"})
    assert response.status_code == 409
    assert not ApiKey.objects.exists()


def test_a_form_with_an_error_keeps_its_token_until_a_key_is_made(admin_client, alice):
    form = add_form(admin_client, name="from-admin")
    refused = admin_client.post("/admin/apikeys/apikey/add/", form)  # no user chosen
    assert refused.status_code == 200 and not ApiKey.objects.exists()
    kept = ISSUE_TOKEN.search(refused.text)
    assert kept and kept.group(1) == form["issue_token"]
    issued = admin_client.post("/admin/apikeys/apikey/add/", {**form, "user": alice.id})
    assert issued.status_code == 200 and KEY.search(issued.text)
    assert ApiKey.objects.count() == 1


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


def test_staff_without_the_add_permission_get_neither_form_nor_key(client, alice):
    alice.is_staff = True
    alice.save()
    client.force_login(alice)
    assert client.get("/admin/apikeys/apikey/add/").status_code == 403
    refused = client.post("/admin/apikeys/apikey/add/", {"user": alice.id, "issue_token": "x"})
    assert refused.status_code == 403
    assert not ApiKey.objects.exists()


def test_the_add_form_takes_scopes_and_an_expiry(admin_client, alice):
    form = add_form(admin_client, user=alice.id, name="ci", scopes=["pets:read"], days=7)
    response = admin_client.post("/admin/apikeys/apikey/add/", form)
    assert response.status_code == 200 and KEY.search(response.text)
    assert "pets:read" in response.text  # the scopes and the end, on the page with the key
    key = ApiKey.objects.get()
    assert key.scopes == ["pets:read"]
    assert 6 < (key.expires_at - key.created_at).total_seconds() / 86400 <= 7


@pytest.mark.parametrize("days", [0, 367])
def test_an_expiry_beyond_366_days_is_refused_on_the_form(admin_client, alice, days):
    form = add_form(admin_client, user=alice.id, name="ci", days=days)
    refused = admin_client.post("/admin/apikeys/apikey/add/", form)
    assert refused.status_code == 200 and not KEY.search(refused.text)
    assert not ApiKey.objects.exists()


def test_the_list_shows_scopes_expiry_last_use_and_project(admin_client, alice_key, shop):
    ApiKey.objects.filter(pk=alice_key.api_key.pk).update(last_used_ip="203.0.113.7")
    page = admin_client.get("/admin/apikeys/apikey/").text
    assert "domains:write" in page and "203.0.113.7" in page
    assert "all of the user" in page  # no project: all of the user's
    detail = admin_client.get(f"/admin/apikeys/apikey/{alice_key.api_key.pk}/change/").text
    assert "expires" in detail.lower() and "203.0.113.7" in detail


def test_a_key_limited_to_a_project_never_exceeds_the_users_role_there(
    admin_client, alice, bob, bobs, shop
):
    Membership.objects.create(project=bobs, user=alice, role=Role.VIEWER)
    form = add_form(admin_client, user=alice.id, project=bobs.pk, scopes=["domains:write"])
    refused = admin_client.post("/admin/apikeys/apikey/add/", form)
    assert refused.status_code == 200 and not KEY.search(refused.text)
    assert "does not allow domains:write" in refused.text
    stranger = add_form(admin_client, user=bob.id, project=shop.pk, scopes=["pets:read"])
    refused = admin_client.post("/admin/apikeys/apikey/add/", stranger)
    assert "bob is no member of shop" in refused.text
    assert not ApiKey.objects.exists()

    made = admin_client.post(
        "/admin/apikeys/apikey/add/",
        add_form(admin_client, user=alice.id, name="ci", project=bobs.pk, scopes=["domains:read"]),
    )
    assert made.status_code == 200 and KEY.search(made.text)
    assert ProjectKey.objects.get().project == bobs
    assert "bobs" in admin_client.get("/admin/apikeys/apikey/").text
