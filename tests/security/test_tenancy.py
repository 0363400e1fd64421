"""Tenancy of the dashboard: every URL of domains.urls and every domain action,
tried as another owner, as an anonymous visitor and with a forged CSRF token,
is refused and changes nothing. The URL list is read from domains.urls, so a new
page is covered the day it is added (and fails here until its arguments are known).

Also: a redirect's `to` is always a domain of the same project, and nothing on the
dashboard or the sign-in form redirects to another site."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from domains import urls as dashboard_urls
from domains.choices import State
from domains.models import (
    Delivery,
    Deploy,
    Domain,
    DomainEvent,
    Project,
    Redirect,
    WebhookEndpoint,
)
from domains.services.custom_domains import domain_add
from domains.services.redirects import redirect_save
from tests.fixtures.domains import go_live
from tests.fixtures.people import PASSWORD
from tests.security.dashboard import LINKS, OWN, PUBLIC, dashboard_urls_for, post_data

pytestmark = pytest.mark.django_db


def _snapshot() -> list:
    return [
        list(model.objects.order_by("pk").values())
        for model in (
            Project,
            Domain,
            Redirect,
            Deploy,
            DomainEvent,
            WebhookEndpoint,
            Delivery,
        )  # fmt: skip
    ] + [list(get_user_model().objects.order_by("pk").values_list("username", "email"))]


def test_the_enumeration_sees_every_dashboard_action(alices):
    names = {name for name, _ in dashboard_urls_for(alices)}
    assert set(post_data(alices)) <= names
    assert len(names) == len(dashboard_urls.urlpatterns)


def test_anonymous_visitors_are_sent_to_sign_in_and_change_nothing(alices):
    before, client = _snapshot(), Client()
    data = post_data(alices)
    for name, path in dashboard_urls_for(alices):
        if name in LINKS:
            continue  # the invitation's page: its holder's, signed in or not
        for method in ("get", "post"):
            response = getattr(client, method)(path, data.get(name, {}))
            assert response.status_code == 302, (method, path)
            if name in PUBLIC:
                assert response["Location"] == "/dashboard/"
            else:
                assert response["Location"].startswith("/accounts/login/?next="), (method, path)
    assert _snapshot() == before


def test_another_owner_is_refused_everywhere_and_changes_nothing(alices, bob, bobs):
    before, client = _snapshot(), Client()
    client.force_login(bob)
    data = post_data(alices)
    for name, path in dashboard_urls_for(alices):
        if name in PUBLIC:
            continue
        if name in LINKS:
            continue  # whoever holds an invitation's link is told what it offers
        for method in ("get", "post"):
            response = getattr(client, method)(path, data.get(name, {}))
            assert b"example.com" not in response.content and b"Shop" not in response.content
            if path == "/dashboard/" or name in OWN:
                continue  # bob's own list of projects and choices: his, not alice's
            # 404: bob cannot even learn that alice's project exists; 405: wrong verb.
            assert response.status_code in (404, 405), (method, path, response.status_code)
    assert _snapshot() == before


def test_a_forged_csrf_token_is_refused_on_every_action(alices, alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    client.get(reverse("dashboard:project_domains", kwargs={"slug": "shop"}))  # sets the cookie
    assert settings.CSRF_COOKIE_NAME in client.cookies
    before, data = _snapshot(), post_data(alices)
    tried = 0
    for name, path in dashboard_urls_for(alices):
        if name not in data:
            continue
        forged = data[name] | {"csrfmiddlewaretoken": "x" * 64}
        for body in (forged, data[name]):  # a wrong token, and none at all
            response = client.post(path, body)
            assert response.status_code == 403, (path, response.status_code)
            tried += 1
        cross_site = client.post(
            path,
            data[name] | {"csrfmiddlewaretoken": client.cookies[settings.CSRF_COOKIE_NAME].value},
            HTTP_ORIGIN="https://evil.example",
        )
        assert cross_site.status_code == 403, path
    assert tried == 2 * len(data)
    assert _snapshot() == before


def test_the_admin_is_for_staff_only(alices, bob):
    client = Client()
    client.force_login(bob)
    for path in [
        "/admin/",
        "/admin/domains/domain/",
        f"/admin/domains/domain/{alices['www'].pk}/change/",
    ]:
        response = client.get(path)
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/")


# --- no open redirect -----------------------------------------------------------


def test_a_redirect_cannot_point_at_another_projects_domain(alices, alice, bob, bobs):
    bobs_domain = domain_add(project=bobs, hostname="bob.example.net", actor=bob)
    with pytest.raises(ValidationError) as refused:
        redirect_save(
            project=alices["project"],
            from_domain=alices["www"],
            to_domain=go_live(bobs_domain),
            actor=alice,
        )
    assert refused.value.code == "not_owned"


def test_the_dashboard_form_offers_and_accepts_only_the_projects_domains(alices, alice, bob, bobs):
    bobs_domain = domain_add(project=bobs, hostname="bob.example.net", actor=bob)
    client = Client()
    client.force_login(alice)
    add = reverse("dashboard:redirect_add", kwargs={"slug": "shop"})
    assert b"bob.example.net" not in client.get(add).content
    response = client.post(
        add, {"from_domain": alices["www"].pk, "to_domain": bobs_domain.pk, "status": 301}
    )
    assert response.status_code == 400
    assert not Redirect.objects.filter(to_domain=bobs_domain).exists()
    remove = reverse(
        "dashboard:domain_remove", kwargs={"slug": "shop", "hostname": "www.example.com"}
    )
    response = client.post(remove, {"redirect_instead": "1", "redirect_to": bobs_domain.pk})
    assert response.status_code == 400
    assert not Redirect.objects.filter(to_domain=bobs_domain).exists()


def test_a_served_redirect_stays_on_the_target_domain_whatever_the_path(alices, client):
    Domain.objects.filter(pk=alices["apex"].pk).update(state=State.VERIFIED)
    response = client.get("//evil.example/steal?x=1", HTTP_HOST="example.com")
    assert response.status_code == 301
    assert response["Location"].split("/")[2] == "www.example.com"


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/", "/\\evil.example"])
def test_sign_in_never_sends_the_visitor_to_another_site(alice, target):
    client = Client()
    response = client.post(
        "/accounts/login/?next=" + target, {"username": "alice", "password": PASSWORD}
    )
    assert response.status_code == 302
    assert response["Location"] == "/dashboard/"
