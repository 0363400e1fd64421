"""listPets' hot path (pets.api.hotpath) answers exactly what DRF's generic list answers.

Each scenario is played twice on the same data, once with API_LIST_FAST_PATH on and
once off, from a clean rate-limit state and at the same frozen instant; status,
headers (but the per-request id and date) and body bytes must be identical. The
requests the hot path is meant to answer must have been answered by it, and with
the switch off by DRF alone.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
import time_machine
from django.core.cache import cache
from django.core.handlers.wsgi import WSGIHandler
from django.urls import reverse
from rest_framework.test import APIClient

from petstore import wsgi
from petstore.api.errors import SUSPICIOUS
from petstore.api.pagination import encode_cursor
from petstore.api.throttles import counter_key, parse_rate
from petstore.apikeys.services import api_key_issue, api_key_revoke
from petstore.http import lean
from petstore.redisclients import shared_client
from tests.pets.api.compare import (
    NO_HEADER,
    answered_by_drf,
    assert_same,
    assert_same_through_wsgi,
    link_of,
    play,
    wsgi_get,
)
from tests.pets.helpers import bearer, clear_rate_limits

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("test_transaction_kept")]


def test_every_page_of_every_filter_is_answered_alike_by_the_hot_path(
    settings, alice_key, pets, no_rate_limits
):
    starts = [
        "/v1/pets",
        "/v1/pets?limit=1",
        "/v1/pets?limit=2",
        "/v1/pets?limit=3&status=sold",
        "/v1/pets?status=available&limit=2",
        "/v1/pets?status=pending",
        "/v1/pets?limit=100",  # the only page: no Link
        f"/v1/pets?cursor={encode_cursor(pets[-1].pk)}",  # after the last pet: []
    ]
    for start in starts:
        url: str | None = start
        pages = 0
        while url:  # follow the next links through both paths, page by page
            (answer,) = assert_same(settings, alice_key, [(url, {})], hot=True)
            url, pages = link_of(answer), pages + 1
            assert pages <= len(pets) + 1
    assert link_of(assert_same(settings, alice_key, [("/v1/pets?limit=100", {})])[0]) is None


@pytest.mark.parametrize(
    "query",
    [
        "limit=0",
        "limit=101",
        "limit=abc",
        "limit=",
        "limit=%205",
        "status=adopted",
        "status=",
        "status=SOLD",
        "status=sold&status=adopted",  # the last value counts, as for a form
        "cursor=forged",
        "cursor=",
        "cursor=" + "6" + "x" * 20,
        "status=adopted&limit=0&cursor=forged",  # the filter first, then limit, then cursor
        "limit=0&cursor=forged",
    ],
)
def test_invalid_parameters_get_the_same_error(settings, alice_key, pets, query):
    # The hot path hands every error to DRF's exception handling: both answer with
    # DRF's Response, so which path ran is not told apart here.
    (answer,) = assert_same(settings, alice_key, [(f"/v1/pets?{query}", {})])
    assert answer[0] == 400


@pytest.mark.parametrize(
    "query",
    [
        "extra=a%2Fb",  # an escape: urlencode's own spelling, re-encoded all the same
        "extra=a/b",  # a character urlencode escapes
        "extra=a b",  # a raw space (test clients let it through)
        "extra=a+b",
        "extra=%C3%A9t%C3%A9",
        "extra=\u00e9t\u00e9",  # raw non-ASCII
        "extra=%41",  # an escape urlencode would not write
        "extra=1&extra=2",  # a duplicate: the last value, once
        "extra=1&status=sold&extra=2",
        "status=sold&status=available",
        "limit=5&limit=1",
        "flag",  # no '=': carried as `flag=`
        "=x",
        "a=1&&b=2",
        "a=1;b=2",
        "%63ursor=forged",  # a differently spelled cursor is the cursor
        "limit=1&%6Cimit=2",
        "format=json&page=2&q=~tilde_.-",
        "extra=a:b",  # read as written, but urlencode escapes ':'
        "extra=a=b",  # a second '='
        "status=sold&extra=a:b&extra=c",
    ],
)
def test_odd_query_strings_get_the_same_answer_and_next_link(
    settings, alice_key, pets, no_rate_limits, query
):
    answers = assert_same(settings, alice_key, [(f"/v1/pets?limit=1&{query}", {})])
    first = link_of(answers[0])
    if first:  # and the page after it, through the link itself
        assert_same(settings, alice_key, [(first, {})])
        spelled = first.replace("cursor=", "%63ursor=", 1)  # a duplicate that loses
        assert_same(settings, alice_key, [(f"{spelled}&cursor=forged", {})])


def test_the_query_read_without_django_holds_to_its_limit_on_fields(
    settings, alice_key, pets, no_rate_limits
):
    """The hot path reads a plain query itself, within DATA_UPLOAD_MAX_NUMBER_FIELDS: at
    the limit it answers as DRF does; past it, Django's QueryDict refuses the request, and
    both paths answer the same 400 Error body (not Django's HTML page, nor a 500)."""
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 3
    (answer,) = assert_same(settings, alice_key, [("/v1/pets?limit=1&status=sold&x=1", {})])
    assert answer[0] == 200
    over: list[tuple[str, dict]] = [("/v1/pets?limit=1&status=sold&x=1&y=2", {})]
    body = {"code": "bad_request", "message": SUSPICIOUS, "status": 400}
    for fast in (True, False):
        (refused,) = play(settings, alice_key, over, fast=fast)
        assert (refused[0], json.loads(refused[2])) == (400, body), fast


@pytest.mark.parametrize(
    "authorization",
    [
        NO_HEADER,
        "",
        "Bearer",
        "Bearer ",
        "Bearer pst_0000",  # malformed
        "Bearer a b",
        "Bearer pst_00000000_wrong",  # unknown
        "Basic YWxpY2U6eA==",
        "bearer pst_00000000_wrong",
    ],
)
def test_missing_or_refused_credentials_get_the_same_401(settings, alice_key, authorization):
    (answer,) = assert_same(
        settings, alice_key, [("/v1/pets", {"HTTP_AUTHORIZATION": authorization})]
    )
    assert answer[0] == 401


def test_a_revoked_key_gets_the_same_401(settings, alice, pets):
    key = api_key_issue(user=alice)
    api_key_revoke(api_key=key.api_key)
    (answer,) = assert_same(settings, key, [("/v1/pets", {})])
    assert answer[0] == 401


def test_another_users_key_sees_the_same_list(settings, alice_key, bob_key, pets):
    assert_same(settings, alice_key, [("/v1/pets?limit=2", bearer(bob_key.plaintext))], hot=True)


@pytest.mark.parametrize(
    ("accept", "status", "hot"),
    [
        (NO_HEADER, 200, True),
        ("*/*", 200, True),
        ("application/json", 200, True),
        ("application/json; indent=2", 200, False),  # DRF's renderer indents
        ("application/*", 200, False),
        ("text/html, application/json;q=0.5", 200, False),
        ("text/html", 406, False),
        ("application/xml", 406, False),
    ],
)
def test_every_accept_gets_the_same_answer(settings, alice_key, pets, accept, status, hot):
    (answer,) = assert_same(
        settings, alice_key, [("/v1/pets?limit=2", {"HTTP_ACCEPT": accept})], hot=hot
    )
    assert answer[0] == status


def test_the_key_rate_limit_answers_the_same_429(settings, alice_key, pets):
    settings.API_RATE_LIMIT = "2/min"
    settings.API_ADDRESS_RATE_LIMIT = ""
    answers = assert_same(settings, alice_key, [("/v1/pets", {})] * 3)
    assert [answer[0] for answer in answers] == [200, 200, 429]
    assert answers[2][1]["Retry-After"]


def test_the_address_rate_limit_answers_the_same_429(settings, alice_key, bob_key, pets):
    settings.API_RATE_LIMIT = ""
    settings.API_ADDRESS_RATE_LIMIT = "2/min"
    requests = [("/v1/pets", {}), ("/v1/pets", bearer(bob_key.plaintext))] * 2
    answers = assert_same(settings, alice_key, requests)
    assert [answer[0] for answer in answers] == [200, 200, 429, 429]


def test_a_request_refused_by_one_limit_is_counted_once_by_the_other(settings, alice_key, pets):
    # DRF asks every throttle and counts the request in each one that allows it; the
    # hot path must not count it a second time before DRF answers the 429.
    settings.API_RATE_LIMIT = "100/min"
    settings.API_ADDRESS_RATE_LIMIT = "1/min"
    for fast in (True, False):
        answers = play(settings, alice_key, [("/v1/pets", {})] * 2, fast=fast)
        assert [answer[0] for answer in answers] == [200, 429]
        assert cache.get(f"ratelimit:key:60:{alice_key.api_key.prefix}") == 2, fast


def test_other_methods_are_drfs_whatever_the_switch(settings, alice_key):
    settings.API_LIST_FAST_PATH = True
    client = APIClient()
    response = client.options("/v1/pets", **bearer(alice_key.plaintext))
    assert answered_by_drf(response)
    assert response.status_code == 200


# --- Through the WSGI application: the lean handler (petstore.http.lean) -----------------


@pytest.mark.parametrize(
    ("query", "headers", "status"),
    [
        ("", {}, 200),
        ("limit=2", {}, 200),
        ("limit=3&status=sold", {}, 200),
        ("status=available&limit=1&extra=a%2Fb", {}, 200),
        ("limit=0", {}, 400),
        ("cursor=forged", {}, 400),
        ("", {"HTTP_AUTHORIZATION": NO_HEADER}, 401),
        ("", {"HTTP_AUTHORIZATION": "Bearer pst_00000000_wrong"}, 401),
        ("limit=2", {"HTTP_ACCEPT": "text/html"}, 406),
        ("limit=2", {"HTTP_ACCEPT": "application/json; indent=2"}, 200),
        # From the trusted edge over HTTPS: HSTS, and https in the next link.
        ("limit=2", {"HTTP_X_FORWARDED_PROTO": "https", "REMOTE_ADDR": "127.0.0.1"}, 200),
        # Another host is a tenant's (host routing answers), or not a host at all.
        ("", {"HTTP_HOST": "shop.example.org"}, 404),
        ("", {"HTTP_HOST": "bad host"}, 400),
    ],
)
def test_the_lean_handler_answers_byte_for_byte_as_the_full_handler(
    settings, alice_key, pets, no_rate_limits, monkeypatch, query, headers, status
):
    answer = assert_same_through_wsgi(settings, alice_key, query, headers, monkeypatch)
    assert int(answer[0].split()[0]) == status
    names = {name for name, _ in answer[1]}
    if status != 404 and headers.get("HTTP_HOST") is None:  # the API's own answers
        assert {"X-Request-ID", "X-Frame-Options", "X-Content-Type-Options"} <= names


def test_the_lean_handler_redirects_plain_http_as_the_full_handler(
    settings, alice_key, pets, no_rate_limits, monkeypatch
):
    settings.SECURE_SSL_REDIRECT = True
    answer = assert_same_through_wsgi(settings, alice_key, "limit=1", {}, monkeypatch)
    assert answer[0].startswith("301")


def test_the_lean_handler_answers_the_same_429(settings, alice_key, pets, monkeypatch):
    settings.API_RATE_LIMIT = "1/min"
    settings.API_ADDRESS_RATE_LIMIT = ""
    served = []
    for fast in (True, False):
        settings.API_LIST_FAST_PATH = fast
        clear_rate_limits(alice_key.api_key.prefix)
        auth = {"HTTP_AUTHORIZATION": f"Bearer {alice_key.plaintext}"}
        with time_machine.travel(datetime(2027, 3, 1, 12, 0, tzinfo=UTC), tick=False):
            first = wsgi_get("", auth)
            # The window's end is Redis's clock, which time_machine does not stop: a counter
            # without an expiry gets the whole window at its next count (ratelimits.HIT), so
            # both paths' 429 name the whole window, however long the first request took.
            policy = parse_rate("key", settings.API_RATE_LIMIT)
            assert policy is not None
            counter = counter_key(policy, alice_key.api_key.prefix)
            shared_client(settings.REDIS_URL).persist(cache.make_and_validate_key(counter))
            served.append([first, wsgi_get("", auth)])
    assert served[0] == served[1]
    assert [answer[0] for answer in served[0]] == ["200 OK", "429 Too Many Requests"]


def test_the_wsgi_application_is_djangos_handler_with_a_short_chain_for_the_list():
    assert isinstance(wsgi.application, lean.LeanWSGIHandler)
    assert isinstance(wsgi.application, WSGIHandler)
    assert isinstance(wsgi.application.short, WSGIHandler)
    assert set(wsgi.application.paths) == {reverse("pets")}


LOADED: list[str] = []


class LoadRecorder:
    """A middleware that notes each time a handler loads it."""

    def __init__(self, get_response):
        LOADED.append("loaded")
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)


def test_the_short_chain_loads_middleware_less_the_skipped_and_leaves_the_setting_alone(
    settings, monkeypatch
):
    recorder = f"{__name__}.LoadRecorder"
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, recorder]
    before = list(settings.MIDDLEWARE)
    LOADED.clear()
    lean.ShortChainHandler()
    assert LOADED == ["loaded"]  # a middleware not skipped is in the short chain
    monkeypatch.setattr(lean, "SKIPPED", lean.SKIPPED | {recorder})
    lean.ShortChainHandler()
    assert LOADED == ["loaded"]
    WSGIHandler()
    assert LOADED == ["loaded", "loaded"]  # and always in the full one
    assert list(settings.MIDDLEWARE) == before


def test_the_lean_handler_serves_only_the_lists_url_and_its_registered_methods(
    settings, alice_key, monkeypatch
):
    settings.API_LIST_FAST_PATH = True
    served: list[str] = []
    monkeypatch.setattr(lean.LeanWSGIHandler, "serve", lambda *args: served.append("lean"))
    auth = {"HTTP_AUTHORIZATION": f"Bearer {alice_key.plaintext}"}
    assert wsgi_get("", {**auth, "PATH_INFO": "/v1/categories"})[0] == "200 OK"
    assert wsgi_get("", {**auth, "PATH_INFO": "/v1/pets/"})[0].startswith(("301", "404"))
    assert wsgi_get("", {**auth, "REQUEST_METHOD": "OPTIONS"})[0] == "200 OK"
    assert served == []
