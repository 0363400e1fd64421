"""A key does what its scopes and its user's role allow at the moment of the request, on the
projects it reaches, until it ends: 403 `insufficient_scope` (RFC 6750's challenge) outside
its scopes, 403 `forbidden` beyond the role, 404 where its user is no member, 401
`key_expired` after its end; and a key with a bad checksum is refused before any lookup.
Through HTTP, on the pets API (listPets' hot path and DRF) and the domains API."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone
from rest_framework.test import APIClient

from domains.choices import Role
from domains.models import Domain, Membership, Project
from domains.services.keys import key_create
from petstore.apikeys import keycache
from petstore.apikeys.keyformat import checksum, hash_key, parse_key
from petstore.apikeys.models import ApiKey
from petstore.apikeys.services import api_key_issue
from tests.domains.api.helpers import SHOP, post
from tests.pets.helpers import assert_error, bearer

CHALLENGE = 'Bearer realm="petstore", error="insufficient_scope", scope="{scope}"'
FAST = pytest.mark.parametrize("fast", [True, False], ids=["hot path", "DRF"])


def client_of(plaintext: str) -> APIClient:
    client = APIClient()
    client.credentials(**bearer(plaintext))
    return client


def keyed(user, *scopes: str) -> APIClient:
    return client_of(api_key_issue(user=user, scopes=scopes).plaintext)


def assert_insufficient(response, scope: str) -> None:
    body = assert_error(response, 403, "insufficient_scope")
    assert scope in body["message"]
    assert response["WWW-Authenticate"] == CHALLENGE.format(scope=scope)


# --- Scopes ---------------------------------------------------------------------------


@FAST
def test_list_pets_without_pets_read_is_insufficient_scope(settings, alice, make_pet, fast):
    settings.API_LIST_FAST_PATH = fast
    make_pet()
    assert_insufficient(keyed(alice, "domains:read").get("/v1/pets"), "pets:read")
    assert keyed(alice, "pets:read").get("/v1/pets").status_code == 200


def test_adding_a_pet_without_pets_write_is_insufficient_scope(alice, dogs):
    body = {"name": "Rex", "categoryId": dogs.pk}
    assert_insufficient(
        keyed(alice, "pets:read").post("/v1/pets", body, format="json"), "pets:write"
    )
    assert keyed(alice, "pets:write").post("/v1/pets", body, format="json").status_code == 201


def test_a_domains_write_without_domains_write_is_insufficient_scope(alice, shop, www):
    reader = keyed(alice, "domains:read")
    assert reader.get(f"{SHOP}/domains").status_code == 200
    refused = post(reader, f"{SHOP}/domains", {"hostname": "new.example.test"})
    assert_insufficient(refused, "domains:write")
    assert_insufficient(reader.delete(f"{SHOP}/domains/www.example.test"), "domains:write")
    assert list(Domain.objects.values_list("hostname", flat=True)) == ["www.example.test"]
    assert_insufficient(keyed(alice, "pets:read").get(f"{SHOP}/domains"), "domains:read")


# --- The role at the moment of the request ----------------------------------------------


@pytest.fixture
def dev(bob, shop):
    """bob, a developer of alice's shop, with a key of every scope his roles allow."""
    Membership.objects.create(project=shop, user=bob, role=Role.DEVELOPER)
    return bob


def test_a_demoted_member_s_cached_key_shrinks_at_the_next_request(dev, shop, www):
    client = client_of(key_create(user=dev, name="ci").plaintext)
    assert client.get(f"{SHOP}/domains").status_code == 200  # the key is cached now
    assert post(client, f"{SHOP}/domains", {"hostname": "a.example.test"}).status_code == 201

    Membership.objects.filter(project=shop, user=dev).update(role=Role.VIEWER)

    refused = post(client, f"{SHOP}/domains", {"hostname": "b.example.test"})
    assert_error(refused, 403, "forbidden")
    assert client.get(f"{SHOP}/domains").status_code == 200  # a viewer still reads
    assert not Domain.objects.filter(hostname="b.example.test").exists()


def test_a_removed_member_s_cached_key_finds_the_project_no_more(dev, shop, www):
    client = client_of(key_create(user=dev, name="ci", project=_with_role(shop, dev)).plaintext)
    assert client.get(f"{SHOP}/domains").status_code == 200  # cached

    Membership.objects.filter(project=shop, user=dev).delete()

    for response in (
        client.get(f"{SHOP}/domains"),
        client.get(f"{SHOP}/domains/www.example.test"),
        post(client, f"{SHOP}/domains", {"hostname": "c.example.test"}),
    ):
        body = assert_error(response, 404, "not_found")
        assert body["message"] == "No project 'shop'."


def test_a_key_limited_to_a_project_reaches_no_other(dev, shop, bobs):
    client = client_of(key_create(user=dev, name="ci", project=_with_role(shop, dev)).plaintext)
    assert client.get(f"{SHOP}/domains").status_code == 200
    assert_error(client.get("/v1/projects/bobs/domains"), 404, "not_found")  # his own project
    everywhere = client_of(key_create(user=dev, name="all").plaintext)
    assert everywhere.get("/v1/projects/bobs/domains").status_code == 200


def _with_role(project, user):
    return Project.objects.for_member(user).get(pk=project.pk)


# --- The key's end ----------------------------------------------------------------------


@FAST
def test_an_expired_key_is_401_key_expired_on_list_pets(settings, alice, make_pet, fast):
    settings.API_LIST_FAST_PATH = fast
    make_pet()
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        issued = api_key_issue(user=alice, days=30)
        client = client_of(issued.plaintext)
        assert client.get("/v1/pets").status_code == 200  # cached from here on
    with time_machine.travel(start + timedelta(days=30, seconds=-1), tick=False):
        assert client.get("/v1/pets").status_code == 200
    with time_machine.travel(start + timedelta(days=30), tick=False):
        response = client.get("/v1/pets")
    body = assert_error(response, 401, "key_expired")
    assert "Settings → API keys" in body["message"]
    assert response["WWW-Authenticate"].startswith('Bearer realm="petstore"')


def test_an_expired_key_is_401_key_expired_on_the_domains_api(alice, shop, www):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        client = client_of(key_create(user=alice, name="ci", days=1).plaintext)
        assert client.get(f"{SHOP}/domains").status_code == 200
    with time_machine.travel(start + timedelta(days=1, minutes=1), tick=False):
        assert_error(client.get(f"{SHOP}/domains"), 401, "key_expired")
        refused = post(client, f"{SHOP}/domains", {"hostname": "late.example.test"})
        assert_error(refused, 401, "key_expired")
    assert not Domain.objects.filter(hostname="late.example.test").exists()


# --- The checksum -------------------------------------------------------------------------


def _bad_checksum(plaintext: str) -> str:
    last = plaintext[-1]
    return plaintext[:-1] + ("0" if last != "0" else "1")


@FAST
def test_a_bad_checksum_is_refused_before_any_lookup(
    settings, alice_key, make_pet, monkeypatch, django_assert_num_queries, fast
):
    settings.API_LIST_FAST_PATH = fast
    make_pet()
    forged = _bad_checksum(alice_key.plaintext)
    assert parse_key(forged) is None and parse_key(alice_key.plaintext) is not None
    looked_up = []
    monkeypatch.setattr(keycache, "lookup", lambda *args, **kw: looked_up.append(args))
    client = client_of(forged)
    with django_assert_num_queries(0):
        response = client.get("/v1/pets")
    body = assert_error(response, 401, "unauthorized")
    assert body["message"] == "Malformed bearer token."
    assert 'error="invalid_token"' in response["WWW-Authenticate"]
    assert looked_up == []


def test_a_well_formed_key_nobody_was_given_is_looked_up_and_refused(alice_key):
    prefix, secret = alice_key.api_key.prefix, "Z" * 43
    made_up = f"pst_{prefix}_{secret}{checksum(f'{prefix}_{secret}')}"
    assert parse_key(made_up) is not None
    body = assert_error(client_of(made_up).get("/v1/pets"), 401, "unauthorized")
    assert body["message"] == "Invalid or revoked API key."


def test_a_key_issued_before_the_checksum_keeps_working_until_its_end(alice):
    legacy = "pst_0a1b2c3d_" + "Ab-_" * 10 + "xyz"  # 43 base64url characters, no checksum
    ApiKey.objects.create(
        user=alice, prefix="0a1b2c3d", key_hash=hash_key(legacy), scopes=["pets:read"],
        expires_at=timezone.now() + timedelta(days=90),
    )  # fmt: skip
    assert client_of(legacy).get("/v1/pets").status_code == 200
    with time_machine.travel(timezone.now() + timedelta(days=91), tick=False):
        assert_error(client_of(legacy).get("/v1/pets"), 401, "key_expired")
