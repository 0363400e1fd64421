"""With production settings (DEBUG off): HSTS, secure and HTTP-only cookies, the
CSP on HTML pages only, and no debug page anywhere."""

from __future__ import annotations

import pytest
from django.test import Client

from domains.dashboard import views
from petstore import settings as production_settings
from petstore.http.csp import DEFAULT_HEADER
from tests.fixtures.people import PASSWORD

pytestmark = pytest.mark.django_db

EXPECTED_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
)


@pytest.fixture
def production(settings):
    assert settings.DEBUG is False
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    # The names production settings compute (this process runs with DEBUG off).
    settings.SESSION_COOKIE_NAME = production_settings.SESSION_COOKIE_NAME
    settings.CSRF_COOKIE_NAME = production_settings.CSRF_COOKIE_NAME
    settings.SECURE_HSTS_SECONDS = 31536000
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    return settings


def test_the_policy_is_the_documented_one():
    assert DEFAULT_HEADER == EXPECTED_CSP


def test_https_responses_carry_hsts_and_the_csp(client, production):
    page = client.get("/accounts/login/", secure=True)
    assert page.status_code == 200
    assert page["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
    assert page["Content-Security-Policy"] == EXPECTED_CSP
    assert page["X-Frame-Options"] == "DENY"
    assert page["X-Content-Type-Options"] == "nosniff"


def test_json_answers_carry_no_page_policy(client, production):
    response = client.get("/v1/pets", secure=True)
    assert response.status_code == 401
    assert "Content-Security-Policy" not in response


def test_session_and_csrf_cookies_are_secure_and_the_session_http_only(production, alice):
    client = Client()
    form = client.get("/accounts/login/", secure=True)
    # __Host-: secure, path /, no Domain: a tenant page on a sibling host cannot set them.
    csrf = form.cookies["__Host-csrftoken"]
    assert csrf["secure"] is True and csrf["path"] == "/" and not csrf["domain"]
    signed_in = client.post(
        "/accounts/login/",
        {"username": "alice", "password": PASSWORD},
        secure=True,
    )
    assert signed_in.status_code == 302
    session = signed_in.cookies["__Host-sessionid"]
    assert session["path"] == "/" and not session["domain"]
    assert session["secure"] is True and session["httponly"] is True


def test_no_debug_page_on_an_unknown_url_or_a_crash(client, production, monkeypatch, alice):
    missing = client.get("/dashboard/no/such/page/", secure=True)
    assert missing.status_code == 404
    assert b"Traceback" not in missing.content and b"URLconf" not in missing.content

    def explode(*args, **kwargs):
        raise RuntimeError("secret detail")

    monkeypatch.setattr(views, "render", explode)  # the dashboard home crashes
    client.raise_request_exception = False
    client.force_login(alice)
    crashed = client.get("/dashboard/", secure=True)
    assert crashed.status_code == 500
    assert b"secret detail" not in crashed.content and b"Traceback" not in crashed.content
