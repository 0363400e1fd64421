"""The lists page like listPets; every POST honours Idempotency-Key; the primary domain
and the redirects go through the dashboard's services."""

from __future__ import annotations

import pytest

from domains.models import Domain, DomainEvent, Project, Redirect
from domains.services.custom_domains import domain_add
from petstore.apikeys.models import IdempotencyRecord
from tests.domains.api.helpers import SHOP, post, put
from tests.pets.helpers import assert_error


@pytest.fixture
def many(shop, alice):
    return [domain_add(project=shop, hostname=f"d{i}.example.test", actor=alice) for i in range(5)]


def _next(response) -> str | None:
    link = response.get("Link")
    return link[1 : link.index(">")] if link else None


def test_domains_page_with_a_signed_cursor_in_the_link_header(api, many):
    seen: list[list[str]] = []
    url: str | None = f"{SHOP}/domains?limit=2"
    while url:
        response = api.get(url)
        assert response.status_code == 200
        seen.append([d["hostname"] for d in response.json()])
        url = _next(response)
    assert seen == [
        ["d0.example.test", "d1.example.test"],
        ["d2.example.test", "d3.example.test"],
        ["d4.example.test"],
    ]


@pytest.mark.parametrize("query", ["limit=0", "limit=101", "limit=x", "cursor=forged"])
def test_bad_paging_is_a_400(api, many, query):
    assert_error(api.get(f"{SHOP}/domains?{query}"), 400, "validation_error")


def test_a_list_does_not_grow_queries_with_its_length(api, many, django_assert_max_num_queries):
    with django_assert_max_num_queries(6):  # the key and its use, the project, one page
        assert len(api.get(f"{SHOP}/domains?limit=100").json()) == 5


def test_adding_a_domain_twice_with_one_idempotency_key_adds_it_once(api, shop):
    key = {"HTTP_IDEMPOTENCY_KEY": "add-www-1"}
    first = post(api, f"{SHOP}/domains", {"hostname": "www.example.test"}, **key)
    again = post(api, f"{SHOP}/domains", {"hostname": "www.example.test"}, **key)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again["Location"] == first["Location"]
    assert again["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first
    assert Domain.objects.count() == 1
    assert DomainEvent.objects.filter(action="added").count() == 1

    other = post(api, f"{SHOP}/domains", {"hostname": "api.example.test"}, **key)
    assert_error(other, 422, "idempotency_key_reused")


def test_a_refused_post_releases_its_idempotency_key(api, shop, www):
    key = {"HTTP_IDEMPOTENCY_KEY": "add-twice"}
    assert_error(
        post(api, f"{SHOP}/domains", {"hostname": "www.example.test"}, **key), 409, "duplicate"
    )
    assert not IdempotencyRecord.objects.exists()


def test_verify_and_redirects_honour_idempotency_key_too(
    api, furnished, django_capture_on_commit_callbacks
):
    Redirect.objects.all().delete()
    key = {"HTTP_IDEMPOTENCY_KEY": "verify-1"}
    with django_capture_on_commit_callbacks() as queued:
        first = post(api, f"{SHOP}/domains/www.example.test/verify", **key)
        again = post(api, f"{SHOP}/domains/www.example.test/verify", **key)
    assert first.status_code == again.status_code == 202
    assert again["Idempotent-Replayed"] == "true"
    assert len(queued) == 1  # one check asked for, not two (nor a 409 cooldown)

    body = {"from": "old.example.test", "to": "www.example.test", "status": 308}
    key = {"HTTP_IDEMPOTENCY_KEY": "redirect-1"}
    made = post(api, f"{SHOP}/redirects", body, **key)
    assert made.status_code == 201
    assert post(api, f"{SHOP}/redirects", body, **key).json() == made.json()
    assert Redirect.objects.count() == 1


def test_redirects_are_listed_made_and_deleted(api, furnished):
    listed = api.get(f"{SHOP}/redirects").json()
    assert listed == [
        {
            "from": "old.example.test",
            "id": furnished.pk,
            "to": "www.example.test",
            "status": 301,
            "created_at": listed[0]["created_at"],
        }
    ]
    assert api.delete(f"{SHOP}/redirects/{furnished.pk}").status_code == 204
    assert api.get(f"{SHOP}/redirects").json() == []
    made = post(api, f"{SHOP}/redirects", {"from": "www.example.test", "to": "old.example.test"})
    assert made.status_code == 201
    assert made.json()["status"] == 301
    assert made["Location"].endswith(f"/v1/projects/shop/redirects/{made.json()['id']}")
    assert_error(api.delete(f"{SHOP}/redirects/99999999999999999999"), 404, "not_found")


def test_the_primary_domain_is_set_shown_and_cleared(api, furnished):
    project = put(api, f"{SHOP}/primary-domain", {"hostname": "WWW.example.test"})
    assert project.status_code == 200
    assert project.json() == {
        "slug": "shop",
        "name": "Shop",
        "plan": "pro",
        "primary_domain": "www.example.test",
    }
    assert api.get("/v1/projects").json()[0]["primary_domain"] == "www.example.test"
    assert api.get(f"{SHOP}/domains/www.example.test").json()["is_primary"] is True
    assert api.delete(f"{SHOP}/primary-domain").status_code == 204
    assert Project.objects.get(slug="shop").primary_domain is None
    assert_error(
        put(api, f"{SHOP}/primary-domain", {"hostname": "nope.example.test"}), 404, "not_found"
    )


def test_a_contested_name_shows_the_txt_record_to_create(api, shop, bobs, bob):
    domain_add(project=bobs, hostname="www.example.test", actor=bob)
    shown = post(api, f"{SHOP}/domains", {"hostname": "www.example.test"}).json()
    assert shown["claim"] == {"contested": True}
    txt = [r for r in shown["dns_records"] if r["type"] == "TXT"]
    assert txt and txt[0]["name"] == "_petstore-verification.www"
    assert "bobs" not in str(shown)  # the rival is not named
