"""Settings → API keys: a member makes their own keys (name, one project or all, scopes,
expiry), sees each once, in the answer to the POST, lists them with their last use, and
revokes them. A key never gets a scope the member's role does not allow there."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.messages import get_messages
from django.contrib.sessions.models import Session
from django.utils import timezone
from rest_framework.test import APIClient

from domains.choices import Role
from domains.models import Membership, ProjectKey
from petstore.apikeys.models import ApiKey
from petstore.apikeys.services import api_key_issue
from tests.pets.helpers import assert_error, bearer

PAGE = "/dashboard/settings/api-keys/"
ISSUE_TOKEN = re.compile(r'name="issue_token" value="([^"]+)"')
KEY = re.compile(r"pst_[0-9a-f]{8}_[0-9A-Za-z]{49}")


def form(client, **fields) -> dict:
    """The form's fields as the browser sends them, its one-time token included."""
    token = ISSUE_TOKEN.search(client.get(PAGE).text)
    assert token, "the form carries a one-time token"
    return {"name": "ci", "scopes": ["pets:read"], "days": 90, **fields, "issue_token": token[1]}


def api(plaintext: str) -> APIClient:
    client = APIClient()
    client.credentials(**bearer(plaintext))
    return client


def test_anonymous_signs_in_first(client):
    response = client.get(PAGE)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_navigation_links_to_the_page(alice_client):
    assert f'href="{PAGE}"' in alice_client.get("/dashboard/").text


def test_a_key_made_is_shown_once_in_the_answer_to_the_post(alice_client, shop, www):
    sent = form(alice_client, project=shop.pk, scopes=["domains:read", "pets:read"], days=30)
    response = alice_client.post(PAGE, sent)
    assert response.status_code == 200
    shown = set(KEY.findall(response.text))
    assert len(shown) == 1
    plaintext = shown.pop()
    assert "no-store" in response["Cache-Control"]
    # In this page's body only: no cookie, no message, not the session.
    assert all(plaintext not in morsel.OutputString() for morsel in response.cookies.values())
    assert all(plaintext not in str(m) for m in get_messages(response.wsgi_request))
    session = Session.objects.get(session_key=alice_client.session.session_key)
    assert plaintext not in str(session.get_decoded())

    key = ApiKey.objects.get()
    assert (key.name, key.scopes) == ("ci", ["domains:read", "pets:read"])
    assert timedelta(days=29, hours=23) < key.expires_at - timezone.now() <= timedelta(days=30)
    assert ProjectKey.objects.get(api_key=key).project == shop
    assert api(plaintext).get("/v1/projects/shop/domains").status_code == 200
    assert plaintext not in alice_client.get(PAGE).text  # never shown again


def test_a_reload_of_the_answer_makes_no_second_key_and_shows_none(alice_client, shop):
    sent = form(alice_client)
    assert alice_client.post(PAGE, sent).status_code == 200
    again = alice_client.post(PAGE, sent)  # what a reload of that page sends
    assert again.status_code == 409
    assert not KEY.search(again.text)
    assert "no key was made now" in again.text
    assert ApiKey.objects.count() == 1


def test_a_form_without_its_token_makes_no_key(alice_client, shop):
    response = alice_client.post(PAGE, {"name": "x", "scopes": ["pets:read"], "days": 9})
    assert response.status_code == 409
    assert not ApiKey.objects.exists()


def test_a_viewer_cannot_make_a_key_with_domains_write_on_that_project(
    alice_client, alice, bob, bobs, shop
):
    Membership.objects.create(project=bobs, user=alice, role=Role.VIEWER)
    response = alice_client.post(
        PAGE, form(alice_client, project=bobs.pk, scopes=["domains:write"])
    )
    assert response.status_code == 400
    assert "does not allow domains:write" in response.text
    assert not ApiKey.objects.exists()


def test_only_scopes_some_role_allows_are_offered(client, bob, alice, shop):
    Membership.objects.create(project=shop, user=bob, role=Role.VIEWER)
    Membership.objects.filter(user=bob).exclude(project=shop).delete()
    client.force_login(bob)
    page = client.get(PAGE).text
    assert 'value="domains:read"' in page and 'value="domains:write"' not in page
    refused = client.post(PAGE, form(client, scopes=["domains:write"]))  # all projects
    assert refused.status_code == 400
    assert not ApiKey.objects.exists()


@pytest.mark.parametrize(("days", "status"), [(366, 200), (367, 400), (0, 400)])
def test_the_expiry_is_at_most_366_days(alice_client, shop, days, status):
    response = alice_client.post(PAGE, form(alice_client, days=days))
    assert response.status_code == status
    assert ApiKey.objects.count() == (status == 200)


def test_a_project_of_someone_else_cannot_be_chosen(alice_client, bobs):
    response = alice_client.post(PAGE, form(alice_client, project=bobs.pk))
    assert response.status_code == 400
    assert not ApiKey.objects.exists()


def test_the_list_shows_each_of_the_users_keys_with_its_last_use(alice_client, alice, bob, shop):
    key = api_key_issue(user=alice, name="laptop", scopes=["pets:read"]).api_key
    ApiKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now(), last_used_ip="203.0.113.7")
    bobs_key = api_key_issue(user=bob, name="bobs-own").api_key
    page = alice_client.get(PAGE).text
    assert key.display_prefix in page and "laptop" in page
    assert 'from <span class="mono">203.0.113.7</span>' in page
    assert "All my projects" in page and "pets:read" in page
    assert bobs_key.display_prefix not in page


def test_revoke_asks_then_revokes_and_the_key_stops(alice_client, alice):
    issued = api_key_issue(user=alice, name="old")
    url = f"{PAGE}{issued.api_key.pk}/revoke/"
    asked = alice_client.get(url)
    assert asked.status_code == 200 and "Revoke" in asked.text
    assert api(issued.plaintext).get("/v1/pets").status_code == 200  # cached now
    done = alice_client.post(url)
    assert done.status_code == 302 and done["Location"] == PAGE
    assert_error(api(issued.plaintext).get("/v1/pets"), 401, "unauthorized")
    assert alice_client.post(url).status_code == 404  # revoked already


def test_another_users_key_cannot_be_revoked(alice_client, bob):
    theirs = api_key_issue(user=bob)
    assert alice_client.get(f"{PAGE}{theirs.api_key.pk}/revoke/").status_code == 404
    assert alice_client.post(f"{PAGE}{theirs.api_key.pk}/revoke/").status_code == 404
    theirs.api_key.refresh_from_db()
    assert theirs.api_key.revoked_at is None
