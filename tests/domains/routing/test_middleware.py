"""Serving by host name: the platform subdomain, custom domains, the primary, redirects, removal."""

from __future__ import annotations

import pytest
from django.http import HttpRequest, HttpResponse

from domains.choices import State
from domains.models import Domain
from domains.routing.middleware import HostRoutingMiddleware
from domains.services.custom_domains import domain_add, domain_remove
from domains.services.projects import deploy_record, project_create, project_set_primary
from domains.services.redirects import redirect_save
from tests.fixtures.domains import in_step

pytestmark = pytest.mark.django_db


def live(domain: Domain, state: str = State.ACTIVE) -> Domain:
    Domain.objects.filter(pk=domain.pk).update(**in_step(state))
    domain.refresh_from_db()
    return domain


@pytest.fixture
def www(www):
    return live(www)


@pytest.fixture
def old(shop, alice):
    return live(domain_add(project=shop, hostname="old.example.test", actor=alice))


def get(client, host, path="/", **extra):
    return client.get(path, HTTP_HOST=host, **extra)


def test_platform_subdomain_serves_the_latest_successful_deploy(client, shop):
    deploy_record(project=shop, html="<h1>Second</h1>")
    deploy_record(project=shop, html="<h1>Broken</h1>", succeeded=False)
    response = get(client, "shop.petstore.localhost")
    assert response.status_code == 200
    assert response.content == b"<h1>Second</h1>"
    assert response["Content-Type"] == "text/html; charset=utf-8"


def test_host_is_read_without_port_case_or_trailing_dot(client, shop):
    assert get(client, "SHOP.Petstore.localhost.:8000").status_code == 200


def test_project_without_a_deploy_is_not_found(client, alice):
    project_create(slug="empty", owner=alice, plan="pro")
    assert get(client, "empty.petstore.localhost").status_code == 404


def test_unknown_names_under_the_platform_domain_are_not_found(client, shop):
    assert get(client, "nope.petstore.localhost").status_code == 404
    assert get(client, "a.shop.petstore.localhost").status_code == 404


def test_a_host_attached_nowhere_is_not_found(client, shop):
    assert get(client, "stranger.example.test").status_code == 404


def test_custom_domain_serves_its_projects_page(client, www):
    response = get(client, "www.example.test", "/anything", secure=True)
    assert response.status_code == 200
    assert response.content == b"<h1>Alice's shop</h1>"


def test_custom_domain_is_served_once_verified(client, shop, alice):
    domain = domain_add(project=shop, hostname="new.example.test", actor=alice)
    assert get(client, "new.example.test").status_code == 404  # pending: not ours yet
    live(domain, State.VERIFIED)
    assert get(client, "new.example.test").status_code == 200
    live(domain, State.FAILED)
    assert get(client, "new.example.test").status_code == 404


def test_platform_subdomain_redirects_to_the_active_primary_keeping_path_and_query(
    client, shop, www, alice
):
    project_set_primary(project=shop, domain=www, actor=alice)
    response = get(client, "shop.petstore.localhost", "/menu/cats?page=2&sort=name")
    assert response.status_code == 301
    assert response["Location"] == "https://www.example.test/menu/cats?page=2&sort=name"


def test_primary_that_is_not_active_yet_does_not_redirect(client, shop, www, alice):
    project_set_primary(project=shop, domain=live(www, State.ISSUING), actor=alice)
    assert get(client, "shop.petstore.localhost").status_code == 200


def test_redirect_entry_answers_with_its_status_and_keeps_path_and_query(
    client, shop, www, old, alice, settings
):
    settings.HTTP_PORT, settings.HTTPS_PORT = 8000, 8443
    redirect_save(project=shop, from_domain=old, to_domain=www, status=308, actor=alice)
    response = get(client, "old.example.test:9999", "/a/b?x=1")
    assert response.status_code == 308
    # The configured port, never the one the Host header names; https, as the target has
    # its certificate at the edge.
    assert response["Location"] == "https://www.example.test:8443/a/b?x=1"
    live(www, State.VERIFIED)  # no certificate yet: the target is served over plain HTTP
    assert get(client, "old.example.test", "/a")["Location"] == "http://www.example.test:8000/a"


@pytest.mark.parametrize(
    "host",
    [
        "shop.petstore.localhost:@evil.example",
        "www.example.test:80@evil.example",
        "www.example.test/evil",
        "www.example.test:8o",
        "evil.example\\@www.example.test",
    ],
)
def test_a_host_header_that_is_not_a_name_and_port_is_refused(client, shop, www, host):
    response = get(client, host)
    assert response.status_code == 400
    assert "Location" not in response


def test_removed_domain_is_not_found_on_the_very_next_request(client, www, alice):
    assert get(client, "www.example.test", secure=True).status_code == 200
    domain_remove(domain=www, actor=alice)
    assert get(client, "www.example.test", secure=True).status_code == 404
    assert get(client, "www.example.test").status_code == 404


def test_the_apps_own_hosts_pass_through_to_the_urlconf(client, settings, shop):
    settings.ALLOWED_HOSTS = ["testserver", "localhost", "petstore.localhost", "ops.internal"]
    for host in ("testserver", "localhost", "petstore.localhost", "ops.internal"):
        response = get(client, host, "/admin/login/", secure=True)
        assert response.status_code == 200, host
        assert b"Alice's shop" not in response.content


def test_custom_domains_need_no_allowed_hosts_entry(client, settings, www):
    settings.ALLOWED_HOSTS = ["petstore.localhost"]
    assert get(client, "www.example.test", secure=True).status_code == 200


def test_serving_a_custom_domain_takes_few_queries(client, www, django_assert_max_num_queries):
    with django_assert_max_num_queries(2):
        assert get(client, "www.example.test", secure=True).status_code == 200


def test_the_apps_own_hosts_cost_the_routing_no_query(rf, settings, django_assert_num_queries):
    settings.ALLOWED_HOSTS = ["ops.internal"]
    passed: list[HttpRequest] = []
    app = HttpResponse("the app's own answer")

    def get_response(request: HttpRequest) -> HttpResponse:
        passed.append(request)
        return app

    middleware = HostRoutingMiddleware(get_response)
    with django_assert_num_queries(0):
        for host in (
            "testserver",
            "localhost:8000",
            "[::1]:8000",
            "PETSTORE.localhost",
            "ops.internal",
        ):
            assert middleware(rf.get("/", HTTP_HOST=host)) is app, host
    assert len(passed) == 5


def test_serving_a_platform_subdomain_takes_few_queries(
    client, shop, django_assert_max_num_queries
):
    with django_assert_max_num_queries(2):
        assert get(client, "shop.petstore.localhost").status_code == 200


@pytest.mark.parametrize("ssl_redirect", [False, True])
def test_plain_http_on_a_domain_with_its_certificate_is_sent_to_https(
    client, settings, www, ssl_redirect
):
    """Whatever SECURE_SSL_REDIRECT says: the edge serves every active domain over HTTPS."""
    settings.SECURE_SSL_REDIRECT = ssl_redirect
    response = get(client, "www.example.test", "/p?q=1")
    assert response.status_code == 301
    assert response["Location"] == "https://www.example.test/p?q=1"
    settings.HTTPS_PORT = 8443  # `make run`'s edge
    assert get(client, "www.example.test:8000", "/p")["Location"] == (
        "https://www.example.test:8443/p"
    )
    assert get(client, "www.example.test", "/p", secure=True).status_code == 200


def test_the_platforms_subdomains_go_to_https_only_with_ssl_redirect(client, settings, shop):
    """Their certificate is the platform's wildcard, at the edge in production only."""
    assert get(client, "shop.petstore.localhost", "/p").status_code == 200
    settings.SECURE_SSL_REDIRECT = True
    response = get(client, "shop.petstore.localhost", "/p")
    assert response["Location"] == "https://shop.petstore.localhost/p"


def test_with_ssl_redirect_a_domain_without_certificate_is_served_over_http(client, settings, www):
    settings.SECURE_SSL_REDIRECT = True
    live(www, State.ISSUING)
    assert get(client, "www.example.test").status_code == 200


def test_with_ssl_redirect_the_primary_redirect_goes_to_https(client, settings, shop, www, alice):
    settings.SECURE_SSL_REDIRECT = True
    project_set_primary(project=shop, domain=www, actor=alice)
    response = get(client, "shop.petstore.localhost", "/x")
    assert response["Location"] == "https://www.example.test/x"
