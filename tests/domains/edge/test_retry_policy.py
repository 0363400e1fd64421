"""Which requests the edge sends again to another web process after a dead one had received
them: only those the app makes idempotent (GET, HEAD, OPTIONS; a POST to /v1 with an
Idempotency-Key, petstore/api/idempotency.py). Read from the generated configuration, with
Caddy's matcher semantics (a request is retried if any matcher set matches it, and a set
matches when each of its matchers does); tests/cluster/test_edge_failover.py shows the edge
running it."""

from __future__ import annotations

from fnmatch import fnmatchcase

import pytest

from domains.edge import caddy

SECRET = "s" * 43


def retried(settings, tmp_path, method: str, path: str, headers: dict[str, str]) -> bool:
    settings.EDGE_HTTP = True
    servers = caddy.config(data_dir=tmp_path, secret=SECRET)["apps"]["http"]["servers"]
    policies = [
        handler["load_balancing"]["retry_match"]
        for server in servers.values()
        for route in server["routes"]
        for handler in route.get("handle", [])
        if handler.get("handler") == "reverse_proxy"
    ]
    assert policies and all(policy == policies[0] for policy in policies)
    return any(_matches(matcher_set, method, path, headers) for matcher_set in policies[0])


def _matches(matcher_set: dict, method: str, path: str, headers: dict[str, str]) -> bool:
    known = {"method", "path", "header"}
    assert set(matcher_set) <= known, f"a matcher this test does not read: {matcher_set}"
    if "method" in matcher_set and method not in matcher_set["method"]:
        return False
    if "path" in matcher_set and not any(fnmatchcase(path, p) for p in matcher_set["path"]):
        return False
    for name, values in matcher_set.get("header", {}).items():
        if name not in headers or not any(fnmatchcase(headers[name], v) for v in values):
            return False
    return True


KEY = {"Idempotency-Key": "3b0c6f1e"}


@pytest.mark.parametrize(
    ("method", "path", "headers"),
    [
        ("GET", "/v1/pets", {}),
        ("HEAD", "/", {}),
        ("OPTIONS", "/v1/pets", {}),
        ("POST", "/v1/pets", KEY),
        ("POST", "/v1/projects/shop/redirects", KEY),
    ],
)
def test_what_the_app_makes_idempotent_is_sent_again(settings, tmp_path, method, path, headers):
    assert retried(settings, tmp_path, method, path, headers)


@pytest.mark.parametrize(
    ("method", "path", "headers"),
    [
        ("POST", "/v1/pets", {}),
        ("DELETE", "/v1/pets/7", KEY),
        ("PUT", "/v1/projects/shop/redirects/3", KEY),
        ("PATCH", "/v1/pets/7", KEY),
        ("POST", "/dashboard/domains/7/verify", KEY),
        ("POST", "/accounts/login/", {}),
    ],
)
def test_nothing_else_is_sent_twice(settings, tmp_path, method, path, headers):
    assert not retried(settings, tmp_path, method, path, headers)


def proxy_handlers(settings, tmp_path, upstreams: list[str]) -> list[dict]:
    settings.EDGE_HTTP = True
    settings.EDGE_UPSTREAMS = upstreams
    servers = caddy.config(data_dir=tmp_path, secret=SECRET)["apps"]["http"]["servers"]
    return [
        handler
        for server in servers.values()
        for route in server["routes"]
        for handler in route.get("handle", [])
        if handler.get("handler") == "reverse_proxy"
    ]


def test_only_an_unanswered_health_check_takes_a_web_process_out(settings, tmp_path):
    """No passive checks: they count a write a client's own request cut short against the web
    process (tests/domains/edge/test_client_faults.py shows the edge running this)."""
    for handler in proxy_handlers(settings, tmp_path, ["127.0.0.1:8000", "127.0.0.1:8001"]):
        assert set(handler["health_checks"]) == {"active"}
        active = handler["health_checks"]["active"]
        assert (active["uri"], active["expect_status"]) == ("/healthz", 200)
        assert active["fails"] > 1  # one slow answer is no verdict


def test_a_single_web_process_is_never_taken_out(settings, tmp_path):
    """Nothing to send its requests to instead: a check could only turn them into 503s."""
    for handler in proxy_handlers(settings, tmp_path, ["127.0.0.1:8000"]):
        assert "health_checks" not in handler
