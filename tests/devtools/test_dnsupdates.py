"""The development DNS server as a DNS-01 primary: RFC 2136 updates of one zone's TXT records,
signed with TSIG (devtools/dnsupdates.py), sent by dnspython's own client and by the
platform's (domains/dns/rfc2136.py), and what a query sees after each, over UDP and TCP; and
an owner's wildcard issued by Pebble over DNS-01 with this server as the zone's primary."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.tsig
import dns.tsigkeyring
import dns.update
import pytest

from devtools.devdns import DNSServer
from devtools.dnsupdates import Updates
from devtools.sockets import free_port
from domains.choices import State
from domains.dns.challenges import ProviderError
from domains.dns.rfc2136 import Rfc2136
from domains.services import certificates
from domains.services.custom_domains import domain_add
from tests.fixtures.dns01 import ALGORITHM, KEY_NAME, SECRET
from tests.fixtures.domains import TARGET, check
from tests.fixtures.pebble import running_pebble
from tests.needs import pebble_missing, require

ZONE = "platform.test"
# A test key the server does not hold (32 bytes, base64); it holds tests/fixtures/dns01.py's.
OTHER_SECRET = "YW5vdGhlci10c2lnLXNlY3JldC1vZi0zMi1ieXRlcyE="
RECORD = f"_acme-challenge.{ZONE}"


@pytest.fixture
def primary() -> Iterator[DNSServer]:
    """A development DNS server serving ZONE, taking its updates signed with KEY_NAME."""
    server = DNSServer("127.0.0.1", 0)
    server.add(f"ns1.{ZONE}", "A", "127.0.0.1")
    server.updates = Updates(
        server.records, zone=ZONE, key_name=KEY_NAME, algorithm=ALGORITHM, secret=SECRET
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


def txt(server: DNSServer, name: str = RECORD, *, tcp: bool = False) -> list[str]:
    """The TXT values the server answers at `name` now."""
    send = dns.query.tcp if tcp else dns.query.udp
    response = send(dns.message.make_query(name, "TXT"), server.host, port=server.port, timeout=2)
    return sorted(rdata.to_text().strip('"') for rrset in response.answer for rdata in rrset)


def update(zone: str = ZONE, *, key_name: str | None = KEY_NAME, secret: str = SECRET):
    """An update of `zone`, signed with (key_name, secret); unsigned when key_name is None."""
    if key_name is None:
        return dns.update.UpdateMessage(zone)
    keyring = dns.tsigkeyring.from_text({key_name: (ALGORITHM, secret)})
    return dns.update.UpdateMessage(zone, keyring=keyring, keyname=dns.name.from_text(key_name))


def platform_client(server: DNSServer, **changed: str) -> Rfc2136:
    """The platform's DNS-01 provider pointed at `server`, with the server's key but `changed`."""
    given = {"zone": ZONE, "key_name": KEY_NAME, "algorithm": ALGORITHM, "secret": SECRET}
    return Rfc2136(server=server.address, **{**given, **changed})


def test_a_signed_update_adds_a_txt_record_a_query_sees_and_a_signed_delete_removes_it(primary):
    added = update()
    added.add("_acme-challenge", 60, "TXT", '"token-value"')
    answer = dns.query.tcp(added, primary.host, port=primary.port, timeout=2)
    assert answer.rcode() == dns.rcode.NOERROR
    assert answer.had_tsig  # signed back, and dnspython checked that signature reading it
    assert txt(primary) == txt(primary, tcp=True) == ["token-value"]

    deleted = update()
    deleted.delete("_acme-challenge", "TXT", '"token-value"')
    answer = dns.query.udp(deleted, primary.host, port=primary.port, timeout=2)
    assert answer.rcode() == dns.rcode.NOERROR
    gone = dns.query.udp(dns.message.make_query(RECORD, "TXT"), primary.host, port=primary.port)
    assert gone.rcode() == dns.rcode.NXDOMAIN
    assert txt(primary, tcp=True) == []


def test_the_platforms_client_adds_and_cleans_each_value_of_one_name_on_its_own(primary):
    client = platform_client(primary)
    client.present(RECORD, "for-the-wildcard")
    client.present(RECORD, "for-the-base-name")
    assert txt(primary) == ["for-the-base-name", "for-the-wildcard"]
    client.clean(RECORD, "for-the-wildcard")
    assert txt(primary) == ["for-the-base-name"]
    client.clean(RECORD, "for-the-base-name")
    assert txt(primary) == []


def test_a_delete_of_the_whole_set_removes_every_value(primary):
    client = platform_client(primary)
    client.present(RECORD, "one")
    client.present(RECORD, "two")
    deleted = update()
    deleted.delete("_acme-challenge", "TXT")
    assert dns.query.tcp(deleted, primary.host, port=primary.port).rcode() == dns.rcode.NOERROR
    assert txt(primary) == []


def test_an_unsigned_update_is_refused_and_changes_nothing(primary):
    platform_client(primary).present(RECORD, "kept")
    for change in ("add", "delete"):
        unsigned = update(key_name=None)
        if change == "add":
            unsigned.add("_acme-challenge", 60, "TXT", '"planted"')
        else:
            unsigned.delete("_acme-challenge", "TXT")
        answer = dns.query.tcp(unsigned, primary.host, port=primary.port, timeout=2)
        assert answer.rcode() == dns.rcode.REFUSED
    assert txt(primary) == ["kept"]


@pytest.mark.parametrize(
    ("changed", "error", "said"),
    [
        ({"secret": OTHER_SECRET}, dns.tsig.PeerBadSignature, "BADSIG"),
        ({"key_name": "someone-else."}, dns.tsig.PeerBadKey, "BADKEY"),
        ({"key_name": "someone-else.", "secret": OTHER_SECRET}, dns.tsig.PeerBadKey, "BADKEY"),
    ],
)
def test_a_wrong_key_or_secret_is_notauth_with_its_tsig_error_and_changes_nothing(
    primary, changed, error, said
):
    platform_client(primary).present(RECORD, "kept")
    forged = update(
        key_name=changed.get("key_name", KEY_NAME), secret=changed.get("secret", SECRET)
    )
    forged.delete("_acme-challenge", "TXT")
    with pytest.raises(error):
        dns.query.tcp(forged, primary.host, port=primary.port, timeout=2)
    # The platform's client reads the same refusal, in its own words, without the secret.
    with pytest.raises(ProviderError, match=said) as refused:
        platform_client(primary, **changed).present(RECORD, "planted")
    assert OTHER_SECRET not in str(refused.value) and SECRET not in str(refused.value)
    assert txt(primary) == ["kept"]


def test_a_record_outside_the_zone_is_notzone_and_nothing_of_the_update_is_applied(primary):
    mixed = update()
    mixed.add("_acme-challenge", 60, "TXT", '"inside"')
    mixed.add("_acme-challenge.shop.example.test.", 60, "TXT", '"outside"')
    answer = dns.query.tcp(mixed, primary.host, port=primary.port, timeout=2)
    assert answer.rcode() == dns.rcode.NOTZONE
    assert txt(primary) == []
    assert txt(primary, "_acme-challenge.shop.example.test") == []


def test_another_zone_is_notauth_and_another_type_refused(primary):
    primary.add("ns1.example.test", "A", "127.0.0.1")  # served, but not for updates
    elsewhere = update("example.test")
    elsewhere.add("_acme-challenge", 60, "TXT", '"x"')
    assert dns.query.tcp(elsewhere, primary.host, port=primary.port).rcode() == dns.rcode.NOTAUTH
    address = update()
    address.replace("ns1", 60, "A", "192.0.2.66")
    assert dns.query.tcp(address, primary.host, port=primary.port).rcode() == dns.rcode.REFUSED
    answer = dns.query.udp(
        dns.message.make_query(f"ns1.{ZONE}", "A"), "127.0.0.1", port=primary.port
    )
    assert [rdata.address for rdata in answer.answer[0]] == ["127.0.0.1"]


def test_a_server_given_no_key_refuses_every_update():
    server = DNSServer("127.0.0.1", 0).start()
    try:
        server.add(f"ns1.{ZONE}", "A", "127.0.0.1")
        # Refused before any key is looked at, so unsigned: the platform reads the rcode.
        with pytest.raises(ProviderError, match="refused to add .*: REFUSED$"):
            platform_client(server).present(RECORD, "x")
        assert txt(server) == []
    finally:
        server.stop()


def test_what_updates_left_outlives_an_edit_of_the_zone_file(tmp_path):
    """Under `make run` the owner edits zone files while a CA may be reading a challenge."""
    zone = tmp_path / f"{ZONE}.zone"
    zone.write_text(
        f"$ORIGIN {ZONE}.\n$TTL 60\n@ SOA ns1 hostmaster 1 7200 900 1209600 60\n@ NS ns1\n"
        "ns1 A 127.0.0.1\n"
    )
    server = DNSServer("127.0.0.1", 0, zone_dir=tmp_path)
    server.updates = Updates(
        server.records, zone=ZONE, key_name=KEY_NAME, algorithm=ALGORITHM, secret=SECRET
    )
    server.reload_zones()
    server.start()
    try:
        platform_client(server).present(RECORD, "challenge")
        zone.write_text(zone.read_text() + "www A 192.0.2.7\n")
        os.utime(zone, ns=(time.time_ns(), time.time_ns() + 10**9))
        server._checked_at = 0  # skip the one-second stat throttle
        www = dns.query.udp(
            dns.message.make_query(f"www.{ZONE}", "A"), "127.0.0.1", port=server.port
        )
        assert www.answer  # the edit is served
        assert txt(server) == ["challenge"]  # and the update's record with it
    finally:
        server.stop()


@pytest.mark.acme
@pytest.mark.django_db
def test_an_owners_wildcard_gets_its_certificate_from_the_ca_with_this_server_as_dns01_primary(
    settings, tmp_path, _pebble_tls, dns01_primary, shop, alice
):
    """`make run`'s layout with an ACME CA (tests/fixtures/dns01.py): one development DNS
    server holds the owner's zone with their two records and PLATFORM_DOMAIN's, takes the
    platform's updates there, and is the resolver Pebble validates with (it follows the
    owner's CNAME itself). The wildcard is verified, then issued over DNS-01 on the
    certificates worker's path, and goes Active."""
    require(pebble_missing)
    server = dns01_primary
    domain = domain_add(project=shop, hostname="*.shop.example.test", actor=alice)
    # The two records the dashboard shows, as the owner puts them in their zone file.
    server.add("*.shop.example.test", "CNAME", TARGET)
    server.add("_acme-challenge.shop.example.test", "CNAME", domain.acme_challenge_target)
    assert check(domain).state == State.ISSUING
    with running_pebble(free_port(), server.address, tmp_path, _pebble_tls) as pebble:
        settings.DOMAINS_CA = "acme"
        settings.DOMAINS_ACME_DIRECTORIES = [pebble.directory]
        settings.DOMAINS_ACME_CA_BUNDLE = [str(pebble.ca_bundle)]
        settings.DOMAINS_ACME_EMAIL = "platform@example.test"
        certificate = certificates.certificate_issue(domain_id=domain.pk)

    domain.refresh_from_db()
    assert certificate is not None and domain.state == State.ACTIVE
    assert certificate.serial in pebble.issued()
    assert certificate.san == "*.shop.example.test"
    assert pebble.validations() == ["shop.example.test"]
    # Written at the claim's name in the platform's zone, and removed after.
    assert (domain.acme_challenge_target, "TXT") in server.queries
    assert txt(server, domain.acme_challenge_target) == []
