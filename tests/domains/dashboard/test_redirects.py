"""Primary domain, redirect entries and the project's `domains` structure."""

from __future__ import annotations

import pytest

from domains.models import Redirect
from domains.services.custom_domains import domain_add
from domains.services.projects import project_set_primary
from domains.services.redirects import redirect_save
from tests.fixtures.domains import go_live

P = "/dashboard/projects/shop/"


@pytest.fixture
def apex(shop, alice):
    return domain_add(project=shop, hostname="example.test", actor=alice)


def test_choose_the_primary_domain(alice_client, shop, www, apex):
    response = alice_client.post(P + "primary/", {"domain": www.pk})
    assert response.status_code == 302
    shop.refresh_from_db()
    assert shop.primary_domain == www
    assert alice_client.get(P + "domains.json").json() == {
        "domains": {"primary": "www.example.test", "redirects": []}
    }
    page = alice_client.get(P + "domains/").content.decode()
    assert "The primary domain is now www.example.test." in page
    assert "Set the primary domain" in page  # the activity


def test_primary_can_go_back_to_the_platform_subdomain(alice_client, shop, www, alice):
    project_set_primary(project=shop, domain=www, actor=alice)
    alice_client.post(P + "primary/", {"domain": ""})
    shop.refresh_from_db()
    assert shop.primary_domain is None


def test_add_redirect_defaults_to_301(alice_client, www, apex):
    go_live(www)
    page = alice_client.get(P + "redirects/add/").content.decode()
    assert '<option value="301" selected>' in page

    response = alice_client.post(
        P + "redirects/add/", {"from_domain": apex.pk, "to_domain": www.pk, "status": 301}
    )
    assert response.status_code == 302
    entry = Redirect.objects.get()
    assert (entry.from_domain, entry.to_domain, entry.status) == (apex, www, 301)
    assert alice_client.get(P + "domains.json").json()["domains"]["redirects"] == [
        {"from": "example.test", "to": "www.example.test", "status": 301}
    ]


def test_edit_redirect_status(alice_client, www, apex, alice, shop):
    entry = redirect_save(project=shop, from_domain=apex, to_domain=go_live(www), actor=alice)
    page = alice_client.get(P + f"redirects/{entry.pk}/edit/").content.decode()
    assert "Edit redirect" in page
    alice_client.post(
        P + f"redirects/{entry.pk}/edit/",
        {"from_domain": apex.pk, "to_domain": www.pk, "status": 308},
    )
    entry.refresh_from_db()
    assert entry.status == 308


def test_the_edit_form_starts_from_the_saved_entry(alice_client, www, apex, alice, shop):
    entry = redirect_save(
        project=shop, from_domain=apex, to_domain=go_live(www), status=307, actor=alice
    )
    form = alice_client.get(P + f"redirects/{entry.pk}/edit/").context["form"]
    assert form.initial == {"from_domain": apex, "to_domain": www, "status": 307}


def test_redirect_to_another_domain_starts_from_that_domain(alice_client, www, apex):
    form = alice_client.get(P + "redirects/add/?from=example.test").context["form"]
    assert form.initial == {"from_domain": apex}


def test_delete_redirect_asks_first(alice_client, www, apex, alice, shop):
    entry = redirect_save(project=shop, from_domain=apex, to_domain=go_live(www), actor=alice)
    listing = alice_client.get(P + "domains/").content.decode()
    assert f'href="{P}redirects/{entry.pk}/delete/"' in listing  # a link, not a one-click POST
    asked = alice_client.get(P + f"redirects/{entry.pk}/delete/")
    assert asked.status_code == 200
    assert f"the redirect from {apex.hostname} to {www.hostname}" in asked.content.decode()
    assert Redirect.objects.exists()
    assert alice_client.post(P + f"redirects/{entry.pk}/delete/").status_code == 302
    assert not Redirect.objects.exists()
    assert "Deleted a redirect" in alice_client.get(P + "domains/").content.decode()


def test_redirect_to_itself_is_refused_on_the_form(alice_client, www, apex):
    response = alice_client.post(
        P + "redirects/add/", {"from_domain": www.pk, "to_domain": www.pk, "status": 301}
    )
    assert response.status_code == 400
    assert "A domain cannot redirect to itself." in response.content.decode()
    assert not Redirect.objects.exists()


def test_redirect_status_outside_the_list_is_refused(alice_client, www, apex):
    response = alice_client.post(
        P + "redirects/add/", {"from_domain": apex.pk, "to_domain": www.pk, "status": 303}
    )
    assert response.status_code == 400
    assert not Redirect.objects.exists()


def test_project_page_shows_redirects_and_the_domains_json(alice_client, www, apex, alice, shop):
    redirect_save(project=shop, from_domain=apex, to_domain=go_live(www), actor=alice)
    page = alice_client.get(P + "domains/").content.decode()
    assert "Apex domain · redirects to www.example.test" in page
    table = page[page.index('class="redirects"') :]
    assert "example.test" in table and "www.example.test" in table and "301" in table
    assert (
        "&quot;redirects&quot;: [" in page and "&quot;from&quot;: &quot;example.test&quot;" in page
    )


def test_a_refused_primary_says_why_on_the_form(alice_client, shop, www, apex, alice):
    redirect_save(project=shop, from_domain=apex, to_domain=go_live(www), actor=alice)
    response = alice_client.post(P + "primary/", {"domain": apex.pk})
    assert response.status_code == 400
    assert "redirects elsewhere; delete that redirect" in response.content.decode()
    shop.refresh_from_db()
    assert shop.primary_domain is None
