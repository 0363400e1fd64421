"""Playing the same requests down both paths of listPets and comparing what comes back.

Through Django's test client, the hot path (pets.api.hotpath) against DRF's generic
list; through petstore.wsgi's application, the lean handler (petstore.http.lean)
against the full one. Each returns the answers for a test to look at further.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import Any

import time_machine
from rest_framework.response import Response
from rest_framework.test import APIClient

from petstore.http import lean
from tests.pets.helpers import bearer, clear_rate_limits

ADDRESS = "198.51.100.20"  # TEST-NET-2, test_hotpath.py's own rate-limit budget
PER_REQUEST = {"Date", "X-Request-ID"}
NO_HEADER = None  # a header value that means "not sent"


def answered_by_drf(response) -> bool:
    # DRF answers with its Response; the hot path with a plain one (but for errors,
    # which it hands to DRF's exception handling).
    return isinstance(response, Response)


def play(settings, key, requests: list[tuple[str, dict]], *, fast: bool) -> list[tuple]:
    """Status, headers and body of each request, played in order with alice's key
    unless a request names its own `HTTP_AUTHORIZATION` (NO_HEADER: none sent)."""
    settings.API_LIST_FAST_PATH = fast
    # Every key the requests carry starts from a whole budget, as does the address.
    named = [extra.get("HTTP_AUTHORIZATION") or "" for _, extra in requests]
    prefixes = [value.split("_")[1] for value in named if value.startswith("Bearer pst_")]
    clear_rate_limits(key.api_key.prefix, *prefixes, ADDRESS)
    client = APIClient(REMOTE_ADDR=ADDRESS)
    answers = []
    with time_machine.travel(datetime(2027, 3, 1, 12, 0, tzinfo=UTC), tick=False):
        for path, extra in requests:
            headers = {**bearer(key.plaintext), **extra}
            headers = {name: value for name, value in headers.items() if value is not NO_HEADER}
            response = client.get(path, **headers)
            kept = {k: v for k, v in response.headers.items() if k not in PER_REQUEST}
            answers.append((response.status_code, kept, response.content, response))
    return answers


def assert_same(settings, key, requests, *, hot: bool | None = None) -> list[tuple]:
    """Both paths give the same answers. `hot`: whether the hot path must have
    answered every request itself (None: not checked)."""
    fast = play(settings, key, requests, fast=True)
    drf = play(settings, key, requests, fast=False)
    for request, a, b in zip(requests, fast, drf, strict=True):
        assert a[:3] == b[:3], request
        assert answered_by_drf(b[3]), request
        if hot is not None:
            assert answered_by_drf(a[3]) is not hot, request
    return fast


def link_of(answer) -> str | None:
    link = answer[1].get("Link")
    return link[1 : link.index(">")] if link else None


def wsgi_get(query: str, headers: dict[str, Any]) -> tuple[str, list[tuple[str, str]], bytes]:
    """GET /v1/pets?query through petstore.wsgi's application, as a WSGI server calls it:
    the status line, every header in order, the body. The application is made anew, as
    petstore.wsgi makes it, so that both handlers load their middleware under this test's
    settings (SecurityMiddleware reads them once)."""
    environ = {
        "REQUEST_METHOD": "GET",
        "SCRIPT_NAME": "",
        "PATH_INFO": "/v1/pets",
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": ADDRESS,
        "HTTP_HOST": "testserver",
        "HTTP_X_REQUEST_ID": "0123456789abcdef0123456789abcdef",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": io.StringIO(),
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        **headers,
    }
    started: list = []
    application = lean.LeanWSGIHandler()
    body = application(environ, lambda status, headers, *_: started.append((status, headers)))
    try:
        content = b"".join(body)
    finally:
        # Django's response: a server closes it, which ends the request (request_finished).
        body.close()
    ((status, sent),) = started
    return status, sent, content


def assert_same_through_wsgi(
    settings, key, query: str, headers: dict[str, str], monkeypatch
) -> tuple[str, list[tuple[str, str]], bytes]:
    """The lean handler's answer (switch on) equals the full handler's (off), headers
    included, in order; and the lean handler served it."""
    served: list[str] = []
    serve = lean.LeanWSGIHandler.serve

    def spy(self, environ, start_response):
        served.append(environ["QUERY_STRING"])
        return serve(self, environ, start_response)

    monkeypatch.setattr(lean.LeanWSGIHandler, "serve", spy)
    answers = []
    for fast in (True, False):
        settings.API_LIST_FAST_PATH = fast
        clear_rate_limits(key.api_key.prefix, ADDRESS)
        sent = {"HTTP_AUTHORIZATION": f"Bearer {key.plaintext}", **headers}
        answers.append(wsgi_get(query, {k: v for k, v in sent.items() if v is not NO_HEADER}))
    assert answers[0] == answers[1], (query, headers)
    assert served == [query]  # the lean handler with the switch on, never with it off
    return answers[0]
