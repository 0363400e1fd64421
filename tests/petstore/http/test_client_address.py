"""The client address behind NUM_PROXIES trusted proxies, and the warning when a proxy is
in front but NUM_PROXIES counts none."""

import logging

import pytest
from django.test import RequestFactory

from petstore.http.clientaddress import client_address, warn_forwarded_without_proxies


@pytest.fixture
def fresh_process():
    """The warning is once per process: start each test as a new process would."""
    warn_forwarded_without_proxies.cache_clear()
    yield
    warn_forwarded_without_proxies.cache_clear()


def _request(**meta):
    return RequestFactory().get("/v1/pets", REMOTE_ADDR="10.0.0.9", **meta)


def test_behind_one_proxy_the_address_is_the_one_the_proxy_saw(settings):
    settings.NUM_PROXIES = 1
    request = _request(HTTP_X_FORWARDED_FOR="spoofed, 203.0.113.7")
    assert client_address(request) == "203.0.113.7"


def test_forwarded_for_with_no_proxy_counted_warns_once_per_process(
    settings, caplog, fresh_process
):
    settings.NUM_PROXIES = 0
    caplog.set_level(logging.WARNING, logger="petstore.http.clientaddress")
    for client in ("203.0.113.7", "198.51.100.4", "192.0.2.1"):
        assert client_address(_request(HTTP_X_FORWARDED_FOR=client)) == "10.0.0.9"
    warnings = [r for r in caplog.records if "NUM_PROXIES=0" in r.getMessage()]
    assert len(warnings) == 1
    assert warnings[0].levelno == logging.WARNING


def test_no_warning_without_a_proxy_or_with_proxies_counted(settings, caplog, fresh_process):
    caplog.set_level(logging.WARNING, logger="petstore.http.clientaddress")
    settings.NUM_PROXIES = 0
    client_address(_request())
    settings.NUM_PROXIES = 1
    client_address(_request(HTTP_X_FORWARDED_FOR="203.0.113.7"))
    assert not [r for r in caplog.records if "NUM_PROXIES" in r.getMessage()]
