"""Who may open which dashboard page: the owner; nobody else (404); anonymous signs in first."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from domains.models import Domain, DomainEvent, Redirect
from domains.services.custom_domains import domain_add
from domains.services.projects import project_create
from domains.services.redirects import redirect_save
from tests.fixtures.domains import go_live
from tests.fixtures.people import PASSWORD


@pytest.fixture
def entry(shop, www, alice):
    apex = domain_add(project=shop, hostname="example.test", actor=alice)
    return redirect_save(project=shop, from_domain=apex, to_domain=go_live(www), actor=alice)


def _pages(www, entry):
    """Every dashboard URL that shows or changes alice's project, with its method."""
    p, d = "/dashboard/projects/shop/", "/dashboard/projects/shop/domains/www.example.test/"
    return [
        ("get", p + "domains/", {}),
        ("get", p + "domains.json", {}),
        ("get", d, {}),
        ("get", d + "status.json", {}),
        ("get", d + "remove/", {}),
        ("get", p + "redirects/add/", {}),
        ("get", p + f"redirects/{entry.pk}/edit/", {}),
        ("post", p + "domains/add/", {"hostname": "new.example.test"}),
        ("post", d + "verify/", {}),
        ("post", d + "remove/", {"remove": "1"}),
        ("post", p + "primary/", {"domain": www.pk}),
        ("post", p + "redirects/add/", {"from_domain": www.pk, "to_domain": www.pk}),
        ("post", p + f"redirects/{entry.pk}/edit/", {"status": 302}),
        ("post", p + f"redirects/{entry.pk}/delete/", {}),
    ]


def test_anonymous_visitor_is_sent_to_sign_in(client, www, entry):
    for method, url, data in _pages(www, entry) + [("get", "/dashboard/", {})]:
        response = getattr(client, method)(url, data)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/?next="), url


def test_another_owner_gets_404_everywhere_and_changes_nothing(client, bob, www, entry):
    client.force_login(bob)
    for method, url, data in _pages(www, entry):
        assert getattr(client, method)(url, data).status_code == 404, url
    assert Domain.objects.filter(hostname="www.example.test").exists()
    assert not Domain.objects.filter(hostname="new.example.test").exists()
    assert Redirect.objects.get(pk=entry.pk).status == 301
    assert not DomainEvent.objects.filter(actor=bob).exists()


def test_staff_manage_in_the_admin_not_in_another_owners_dashboard(client, carol, www, entry):
    client.force_login(carol)
    for method, url, data in _pages(www, entry):
        assert getattr(client, method)(url, data).status_code == 404, url
    home = client.get("/dashboard/")
    assert 'href="/admin/"' in home.content.decode()


def test_owner_opens_every_page(client, alice, www, entry):
    client.force_login(alice)
    for method, url, _data in _pages(www, entry):
        if method == "get":
            assert client.get(url).status_code == 200, url


def test_owner_sees_only_their_own_projects(client, alice, bob, shop):
    project_create(slug="bobs", owner=bob, plan="pro", name="Bob's secret")
    client.force_login(alice)
    page = client.get("/dashboard/").content.decode()
    assert "Shop" in page
    assert "Bob&#x27;s secret" not in page and "bobs" not in page


def test_every_form_is_csrf_protected(alice, www, entry):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    for method, url, data in _pages(www, entry):
        if method == "post":
            assert client.post(url, data).status_code == 403, url
    assert Domain.objects.filter(hostname="www.example.test").exists()


def test_forms_carry_the_csrf_token(client, alice, www, entry):
    client.force_login(alice)
    for url in [
        "/dashboard/projects/shop/domains/",
        "/dashboard/projects/shop/domains/www.example.test/",
        "/dashboard/projects/shop/domains/www.example.test/remove/",
        f"/dashboard/projects/shop/redirects/{entry.pk}/edit/",
    ]:
        page = client.get(url).content.decode()
        assert page.count('<form method="post"') == page.count("csrfmiddlewaretoken"), url


def test_sign_in_page_signs_the_owner_in_to_the_dashboard(client, alice):
    response = client.post("/accounts/login/", {"username": "alice", "password": PASSWORD})
    assert response.status_code == 302
    assert response["Location"] == "/dashboard/"


def test_project_page_queries_do_not_grow_with_domains(client, alice, shop):
    client.force_login(alice)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/dashboard/projects/shop/domains/").status_code == 200
        return len(captured)

    first = domain_add(project=shop, hostname="a.example.test", actor=alice)
    second = domain_add(project=shop, hostname="b.example.test", actor=alice)
    redirect_save(project=shop, from_domain=second, to_domain=go_live(first), actor=alice)
    few = queries()
    for name in ["c.example.test", "d.example.test", "example.test"]:
        other = domain_add(project=shop, hostname=name, actor=alice)
        redirect_save(project=shop, from_domain=other, to_domain=go_live(first), actor=alice)
    assert queries() == few
