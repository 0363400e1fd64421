"""The RFC 2136 provider against a real Knot DNS on loopback (tests/fixtures/knot.py): what it
writes and removes, how a refusal reads, and the bounded wait for the zone's servers."""

from __future__ import annotations

import logging
import time

import pytest

from domains.dns.challenges import NotServed, ProviderError, wait_served
from domains.dns.rfc2136 import Rfc2136
from tests.fixtures.knot import ALGORITHM, KEY_NAME, SECRET, ZONE

pytestmark = pytest.mark.knot

NAME = f"_acme-challenge.{ZONE}"


def test_two_values_at_one_name_are_served_and_each_cleanup_removes_only_its_own(knot):
    knot.start()
    provider = Rfc2136.from_settings()
    provider.present(NAME, "wildcard-value")
    provider.present(NAME, "apex-value")
    wait_served(ZONE, NAME, ["wildcard-value", "apex-value"], deadline=time.monotonic() + 10)
    assert knot.txt(NAME) == ["apex-value", "wildcard-value"]
    provider.clean(NAME, "wildcard-value")
    assert knot.txt(NAME) == ["apex-value"]
    provider.clean(NAME, "apex-value")
    assert knot.txt(NAME) == []


@pytest.mark.parametrize(
    ("key_name", "secret", "refusal"),
    [
        ("someone-else.", SECRET, "BADKEY"),
        (KEY_NAME, "d3JvbmctdHNpZy1zZWNyZXQtZm9yLXRoZS10ZXN0cy4=", "BADSIG"),
    ],
    ids=["unknown key", "wrong secret"],
)
def test_a_tsig_refusal_names_it_and_never_shows_a_secret(knot, caplog, key_name, secret, refusal):
    knot.start()
    provider = Rfc2136(
        server=knot.address, zone=ZONE, key_name=key_name, algorithm=ALGORITHM, secret=secret
    )
    with caplog.at_level(logging.DEBUG), pytest.raises(ProviderError) as refused:
        provider.present(NAME, "value")
    said = str(refused.value)
    assert refusal in said
    assert f"The DNS server {knot.address} refused to add the TXT record {NAME}" in said
    for shown in (said, caplog.text, repr(provider)):
        assert SECRET not in shown
        assert secret not in shown
    assert knot.txt(NAME) == []


def test_an_update_outside_the_servers_zones_is_refused_with_its_rcode(knot):
    knot.start()
    provider = Rfc2136(
        server=knot.address,
        zone="other.test",
        key_name=KEY_NAME,
        algorithm=ALGORITHM,
        secret=SECRET,
    )
    with pytest.raises(ProviderError, match=r"refused to add the TXT record .*: NOTAUTH"):
        provider.present("_acme-challenge.other.test", "value")


def test_the_wait_for_every_name_server_ends_at_its_deadline_naming_the_one_without_it(knot):
    # ns2 is in the zone's NS records, but nothing answers at its address.
    knot.servers[f"ns2.{ZONE}"] = "127.0.0.9"
    knot.start()
    Rfc2136.from_settings().present(NAME, "value")
    with pytest.raises(NotServed) as late:
        wait_served(ZONE, NAME, ["value"], deadline=time.monotonic() + 2)
    assert f"ns2.{ZONE} (127.0.0.9) did not have it" in str(late.value)
    assert "ns1" not in str(late.value)
