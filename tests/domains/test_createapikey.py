"""`manage.py createapikey USER [--project SLUG] [--scope SCOPE]... [--expires DAYS]`: a key
printed once, alone on the last line, with its expiry; never more than USER's role allows;
every refusal one line naming what to change."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from domains.choices import Role
from domains.models import Membership, ProjectKey
from petstore.apikeys.keyformat import hash_key, parse_key
from petstore.apikeys.models import ApiKey
from tests.pets.helpers import bearer

NOW = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)


def run(*args) -> list[str]:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().splitlines()


def client_of(key: str) -> APIClient:
    client = APIClient()
    client.credentials(**bearer(key))
    return client


@pytest.mark.django_db
def test_it_creates_the_user_and_prints_a_working_key_alone_on_the_last_line():
    lines = run("createapikey", "alice")
    key = lines[-1]
    assert parse_key(key) is not None and " " not in key
    user = get_user_model().objects.get(username="alice")
    assert not user.has_usable_password()
    assert any("Created user" in line for line in lines[:-1])
    assert all(key not in line for line in lines[:-1])  # printed once
    row = ApiKey.objects.get()
    assert (row.user, row.name, row.key_hash) == (user, "default", hash_key(key))
    assert row.scopes == ["pets:read", "pets:write"]  # a member of nothing: the pets API
    assert client_of(key).get("/v1/pets").status_code == 200


@pytest.mark.django_db
def test_it_reuses_an_existing_user_and_takes_a_label():
    existing = get_user_model().objects.create_user("bob", password="pw-not-touched")
    first = run("createapikey", "bob")[-1]
    lines = run("createapikey", "bob", "--name", "ci")
    assert not any("Created user" in line for line in lines)
    assert lines[-1] != first
    names = ApiKey.objects.filter(user=existing).values_list("name", flat=True)
    assert sorted(names) == ["ci", "default"]
    existing.refresh_from_db()
    assert existing.check_password("pw-not-touched")


@pytest.mark.django_db
def test_it_refuses_a_blank_username():
    with pytest.raises(CommandError, match="USER must not be blank"):
        run("createapikey", " ")


def test_it_prints_the_expiry_default_90_days_or_as_asked(alice):
    with time_machine.travel(NOW, tick=False):
        default = run("createapikey", "alice")
        chosen = run("createapikey", "alice", "--expires", "366")
    assert "expires 2027-05-30 12:00 UTC" in default[-2]
    assert "expires 2028-03-01 12:00 UTC" in chosen[-2]
    ends = sorted(ApiKey.objects.values_list("expires_at", flat=True))
    assert ends == [NOW + timedelta(days=90), NOW + timedelta(days=366)]


@pytest.mark.parametrize("days", ["400", "0", "-3"])
def test_an_expiry_out_of_range_is_refused_in_one_line(alice, days):
    with pytest.raises(CommandError) as refused:
        run("createapikey", "alice", "--expires", days)
    assert str(refused.value) == (f"--expires {days} is out of range: a key lasts 1 to 366 days.")
    assert not ApiKey.objects.exists()


def test_without_scope_the_key_gets_every_scope_the_users_roles_allow(alice, shop, bob, bobs):
    Membership.objects.create(project=bobs, user=alice, role=Role.VIEWER)
    owner_key = ApiKey.objects.get(key_hash=hash_key(run("createapikey", "alice")[-1]))
    assert sorted(owner_key.scopes) == sorted(
        ["pets:read", "pets:write", "domains:read", "domains:write", "webhooks:read",
         "webhooks:write", "members:read", "members:write", "audit:read"]
    )  # fmt: skip
    viewer_key = ApiKey.objects.get(
        key_hash=hash_key(run("createapikey", "alice", "--project", "bobs")[-1])
    )
    assert viewer_key.scopes == sorted(
        ["audit:read", "domains:read", "members:read", "pets:read", "pets:write", "webhooks:read"]
    )
    assert ProjectKey.objects.get(api_key=viewer_key).project == bobs


def test_scope_is_repeated_for_several_and_limits_the_key(alice, shop, www):
    lines = run(
        "createapikey", "alice", "--project", "shop", "--scope", "domains:read",
        "--scope", "pets:read",
    )  # fmt: skip
    key = ApiKey.objects.get()
    assert key.scopes == ["domains:read", "pets:read"]
    assert "on shop" in lines[-2] and "scopes domains:read pets:read" in lines[-2]
    client = client_of(lines[-1])
    assert client.get("/v1/projects/shop/domains").status_code == 200
    refused = client.post("/v1/projects/shop/domains", {"hostname": "a.example.test"})
    assert refused.status_code == 403 and refused.json()["code"] == "insufficient_scope"


def test_an_unknown_scope_is_refused_in_one_line(alice, shop):
    with pytest.raises(CommandError, match=r"^Unknown scope domains:admin; the scopes are "):
        run("createapikey", "alice", "--scope", "domains:admin")
    assert not ApiKey.objects.exists()


def test_a_scope_beyond_the_role_is_refused_in_one_line(alice, bob, bobs):
    Membership.objects.create(project=bobs, user=alice, role=Role.VIEWER)
    with pytest.raises(CommandError) as refused:
        run("createapikey", "alice", "--project", "bobs", "--scope", "domains:write")
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("alice's role on bobs does not allow domains:write; choose among")
    assert not ApiKey.objects.exists()


def test_a_project_the_user_is_no_member_of_is_refused_in_one_line(alice, bobs):
    with pytest.raises(CommandError) as refused:
        run("createapikey", "alice", "--project", "bobs")
    assert str(refused.value) == "alice is no member of a project 'bobs'; name one of theirs."
    with pytest.raises(CommandError, match="no member of a project 'nowhere'"):
        run("createapikey", "alice", "--project", "nowhere")
    assert not ApiKey.objects.exists()


@pytest.mark.django_db
def test_a_refused_key_creates_no_user():
    with pytest.raises(CommandError):
        run("createapikey", "newcomer", "--project", "shop")
    assert not get_user_model().objects.filter(username="newcomer").exists()
