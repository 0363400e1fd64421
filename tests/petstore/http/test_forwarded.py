"""X-Forwarded-For and X-Forwarded-Proto count only when the immediate peer (REMOTE_ADDR) is
in TRUSTED_PROXIES: a client that reaches the web processes directly is limited at its own
address and cannot claim HTTPS, whatever headers it sends."""

from __future__ import annotations

import ipaddress
import logging

import pytest
from axes.models import AccessAttempt

from petstore.http import forwarded

pytestmark = pytest.mark.django_db

STRANGER = "203.0.113.50"  # reaches the web server's port itself, not through the edge
EDGE = "10.0.0.2"


@pytest.fixture
def behind_the_edge(settings):
    """Production's set-up: one proxy in front (NUM_PROXIES=1), the edge at EDGE."""
    settings.NUM_PROXIES = 1
    settings.SIGNIN_MAX_ATTEMPTS = 5
    settings.TRUSTED_PROXIES = [ipaddress.ip_network(EDGE)]
    return settings


@pytest.fixture
def fresh_process():
    """The warning is once per process: start each test as a new process would."""
    forwarded.untrusted_peer_warned.clear()
    yield
    forwarded.untrusted_peer_warned.clear()


def admin_sign_in(client, *, peer: str, forwarded_for: str, username: str = "carol"):
    return client.post(
        "/admin/login/?next=/admin/",
        {"username": username, "password": "wrong"},
        REMOTE_ADDR=peer,
        HTTP_X_FORWARDED_FOR=forwarded_for,
    )


def test_a_client_rotating_x_forwarded_for_from_outside_the_proxies_is_limited_as_itself(
    client, carol, behind_the_edge
):
    statuses = [
        admin_sign_in(client, peer=STRANGER, forwarded_for=f"198.51.100.{n}").status_code
        for n in range(25)
    ]
    # The fifth failure locks (SIGNIN_MAX_ATTEMPTS): 4 forms again, then 21 refusals.
    assert statuses == [200] * 4 + [429] * 21
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {STRANGER}


def test_through_a_trusted_proxy_each_forwarded_client_is_counted_on_its_own(
    client, carol, behind_the_edge
):
    statuses = [
        admin_sign_in(client, peer=EDGE, forwarded_for=f"198.51.100.{n}").status_code
        for n in range(25)
    ]
    assert statuses == [200] * 25  # one failure each: no client reached the limit
    addresses = set(AccessAttempt.objects.values_list("ip_address", flat=True))
    assert addresses == {f"198.51.100.{n}" for n in range(25)}


def test_a_client_cannot_pass_as_the_proxy_by_forging_a_hop(client, carol, behind_the_edge):
    for n in range(5):
        admin_sign_in(client, peer=STRANGER, forwarded_for=f"{EDGE}, 198.51.100.{n}")
    assert admin_sign_in(client, peer=STRANGER, forwarded_for="192.0.2.1").status_code == 429


def test_x_forwarded_proto_https_from_an_untrusted_peer_is_still_plain_http(
    client, behind_the_edge
):
    behind_the_edge.SECURE_SSL_REDIRECT = True
    behind_the_edge.SECURE_HSTS_SECONDS = 31536000
    claimed = client.get("/accounts/login/", REMOTE_ADDR=STRANGER, HTTP_X_FORWARDED_PROTO="https")
    assert claimed.status_code == 301
    assert claimed["Location"] == "https://testserver/accounts/login/"
    assert "Strict-Transport-Security" not in claimed
    through_edge = client.get("/accounts/login/", REMOTE_ADDR=EDGE, HTTP_X_FORWARDED_PROTO="https")
    assert through_edge.status_code == 200
    assert through_edge["Strict-Transport-Security"].startswith("max-age=31536000")


@pytest.mark.parametrize(
    ("peer", "believed"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),  # an IPv4 peer on a dual-stack socket
        ("10.0.0.2", False),
        ("2001:db8::1", False),
        ("", False),  # a unix socket: no address, no proxy
        ("not-an-address", False),
    ],
)
def test_the_default_trusts_loopback_only(client, settings, peer, believed):
    settings.NUM_PROXIES = 1
    settings.SECURE_SSL_REDIRECT = True
    response = client.get(
        "/accounts/login/",
        REMOTE_ADDR=peer,
        HTTP_X_FORWARDED_PROTO="https",
        HTTP_X_FORWARDED_FOR="198.51.100.7",
    )
    assert response.status_code == (200 if believed else 301)


def test_every_forwarded_header_is_dropped_and_the_first_untrusted_peer_logged_once(
    client, behind_the_edge, caplog, fresh_process
):
    caplog.set_level(logging.WARNING, logger="petstore.http.forwarded")
    for peer in (STRANGER, "198.51.100.9"):
        client.get(
            "/healthz",
            REMOTE_ADDR=peer,
            HTTP_X_FORWARDED_HOST="evil.example",
            HTTP_X_FORWARDED_PORT="443",
            HTTP_FORWARDED="for=192.0.2.1;proto=https",
        )
    warnings = [r.getMessage() for r in caplog.records if "TRUSTED_PROXIES" in r.getMessage()]
    assert warnings == [
        f"Ignored X-Forwarded-* headers from {STRANGER}, which is not in TRUSTED_PROXIES "
        "(logged once per process). If that is the proxy in front of the app, add its "
        "address to TRUSTED_PROXIES."
    ]


def test_the_headers_are_gone_before_any_other_middleware_reads_them(rf, settings):
    assert settings.MIDDLEWARE[0] == "petstore.http.forwarded.ForwardedHeadersMiddleware"
    seen: dict = {}

    def rest_of_the_stack(request):
        seen.update(request.META)

    request = rf.get(
        "/",
        REMOTE_ADDR=STRANGER,
        HTTP_X_FORWARDED_FOR="192.0.2.1",
        HTTP_X_FORWARDED_PROTO="https",
        HTTP_X_FORWARDED_HOST="evil.example",
        HTTP_X_FORWARDED_PORT="443",
        HTTP_FORWARDED="for=192.0.2.1",
        HTTP_X_REQUEST_ID="kept",
    )
    forwarded.ForwardedHeadersMiddleware(rest_of_the_stack)(request)
    assert not [key for key in seen if "FORWARDED" in key]
    assert seen["HTTP_X_REQUEST_ID"] == "kept"
