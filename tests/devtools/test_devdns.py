"""The development DNS server itself: UDP and TCP, NXDOMAIN vs NODATA, zone files that reload."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from io import StringIO

import dns.flags
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import pytest
from django.core.management import call_command
from dns.nameserver import Do53Nameserver

from devtools.devdns import DNSServer
from devtools.localenv import TSIG_KEY_NAME, tsig_secret
from devtools.sockets import free_port
from devtools.starterzones import demo_zone_file, write_starter_zones
from domains.dns import diagnosis
from domains.dns import lookups as platform_dns
from domains.dns.rfc2136 import Rfc2136
from tests.processes import ROOT, wait_for

pytestmark = pytest.mark.django_db


def ask(server, name, rdtype, *, tcp=False):
    query = dns.message.make_query(name, rdtype)
    send = dns.query.tcp if tcp else dns.query.udp
    return send(query, server.host, port=server.port, timeout=2)


def test_it_answers_over_udp_and_tcp(dns_server):
    dns_server.add("www.example.test", "A", "192.0.2.1")
    for tcp in (False, True):
        response = ask(dns_server, "www.example.test", "A", tcp=tcp)
        assert response.rcode() == dns.rcode.NOERROR
        assert [r.address for r in response.answer[0]] == ["192.0.2.1"]


def test_answered_all_returns_after_every_question_sent_before_it(dns_server):
    dns_server.add("www.example.test", "A", "192.0.2.1")
    question = dns.message.make_query("www.example.test", "A").to_wire()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        for _ in range(200):  # sent and never read: answered in the server's own time
            sender.sendto(question, (dns_server.host, dns_server.port))
        dns_server.answered_all()
    assert list(dns_server.queries).count(("www.example.test", "A")) == 200


def test_nxdomain_and_nodata_are_kept_apart(dns_server):
    dns_server.add("www.example.test", "TXT", '"x"')
    assert ask(dns_server, "nope.example.test", "A").rcode() == dns.rcode.NXDOMAIN
    nodata = ask(dns_server, "www.example.test", "A")
    assert nodata.rcode() == dns.rcode.NOERROR and not nodata.answer
    assert nodata.authority[0].rdtype == dns.rdatatype.SOA
    assert platform_dns.lookup("nope.example.test", "A").status == platform_dns.NXDOMAIN
    assert platform_dns.lookup("www.example.test", "A").status == platform_dns.NODATA


def test_the_platform_resolver_sees_servfail_and_timeout_apart(dns_server):
    dns_server.servfail("broken.example.test")
    dns_server.blackhole("silent.example.test")
    assert platform_dns.lookup("broken.example.test", "A").status == platform_dns.SERVFAIL
    assert platform_dns.lookup("silent.example.test", "A").status == platform_dns.TIMEOUT


def test_a_port_where_nothing_answers_is_a_timeout(settings):
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    silent.bind(("127.0.0.1", 0))
    try:
        settings.DOMAINS_DNS_NAMESERVERS = [f"127.0.0.1:{silent.getsockname()[1]}"]
        assert platform_dns.lookup("www.example.test", "A").status == platform_dns.TIMEOUT
    finally:
        silent.close()


def test_a_cname_is_followed_within_the_servers_data(dns_server):
    dns_server.add("www.example.test", "CNAME", "domains.petstore.localhost.")
    lookup = platform_dns.lookup("www.example.test", "A")
    assert lookup.values == ()  # no A record owned by www itself
    assert lookup.final == ("192.0.2.80",)


def test_large_answers_set_tc_over_udp_and_come_whole_over_tcp(dns_server):
    dns_server.add("big.example.test", "TXT", *[f'"{"x" * 200} {i}"' for i in range(10)])
    truncated = ask(dns_server, "big.example.test", "TXT")
    assert truncated.flags & dns.flags.TC
    assert len(ask(dns_server, "big.example.test", "TXT", tcp=True).answer[0]) == 10
    assert len(platform_dns.lookup("big.example.test", "TXT").final) == 10  # retried on TCP


def test_zone_files_are_served_and_reloaded_when_they_change(tmp_path):
    zone = tmp_path / "example.test.zone"
    zone.write_text(
        "$ORIGIN example.test.\n$TTL 60\n@ SOA ns1 host 1 7200 900 1209600 60\n@ NS ns1\n"
        "www CNAME domains.petstore.localhost.\n"
    )
    server = DNSServer("127.0.0.1", 0, zone_dir=tmp_path).start()
    try:
        answer = ask(server, "www.example.test", "CNAME")
        assert answer.answer[0][0].target.to_text() == "domains.petstore.localhost."
        zone.write_text(zone.read_text().replace("www CNAME", "shop CNAME"))
        os.utime(zone, ns=(time.time_ns(), time.time_ns() + 10**9))
        server._checked_at = 0  # skip the one-second stat throttle
        assert ask(server, "www.example.test", "CNAME").rcode() == dns.rcode.NXDOMAIN
        assert ask(server, "shop.example.test", "CNAME").answer
    finally:
        server.stop()


def test_a_zone_file_may_hold_an_a_record_beside_the_cname(tmp_path, settings):
    """The broken set-up owners make must be servable from a zone file, so the
    newcomer's demo can show the conflict message."""
    (tmp_path / "example.test.zone").write_text(
        "$ORIGIN example.test.\n$TTL 60\n"
        "@ SOA ns1 host ( 1 7200 ; serial, refresh\n 900 1209600 60 )\n@ NS ns1\n"
        "shop CNAME domains.petstore.localhost.\n"
        "shop A 192.0.2.10\n"
        "     AAAA 2001:db8::10 ; the owner of the line above\n"
    )
    server = DNSServer("127.0.0.1", 0, zone_dir=tmp_path).start()
    settings.DOMAINS_DNS_NAMESERVERS = [server.address]
    settings.PLATFORM_CNAME_TARGET = "domains.petstore.localhost"
    try:
        server.reload_zones()
        assert ask(server, "shop.example.test", "CNAME").answer
        assert [r.address for r in ask(server, "shop.example.test", "A").answer[-1]] == [
            "192.0.2.10"
        ]
        assert ask(server, "shop.example.test", "AAAA").answer
        result = diagnosis.verify("shop.example.test", is_apex=False)
        assert result.code == "conflicting_record"
        assert "192.0.2.10" in result.found
    finally:
        server.stop()


def test_record_values_are_absolute_names_with_or_without_the_final_dot(dns_server):
    dns_server.add("shop.example.test", "CNAME", "domains.petstore.localhost")
    answer = ask(dns_server, "shop.example.test", "CNAME")
    assert answer.answer[0][0].target.to_text() == "domains.petstore.localhost."


def test_the_starter_zones_serve_the_platform_target_and_wait_for_the_walk_throughs_cname(
    tmp_path,
):
    assert len(write_starter_zones(tmp_path)) == 2
    server = DNSServer("127.0.0.1", 0, zone_dir=tmp_path).start()
    try:
        server.reload_zones()
        assert ask(server, "domains.petstore.localhost", "A").answer[0][0].address == "127.0.0.1"
        assert not ask(server, "shop.example.test", "CNAME").answer  # the newcomer adds it
    finally:
        server.stop()


def test_the_starter_zones_never_overwrite_an_edit(tmp_path):
    write_starter_zones(tmp_path)
    edited = demo_zone_file(tmp_path)
    edited.write_text(edited.read_text().replace("; shop  IN CNAME", "shop  IN CNAME"))
    assert write_starter_zones(tmp_path) == []
    assert "\nshop  IN CNAME domains.petstore.localhost." in edited.read_text()


def test_devdns_and_the_demo_write_the_same_walk_through_zone(tmp_path, settings, db):
    """`make run` starts both at once: whichever writes first, the walk-through finds the
    commented CNAME (docs/dashboard.md, step 2)."""
    settings.DOMAINS_DEV_DNS_ZONES = tmp_path
    settings.DEBUG = True
    call_command("loaddomainsdemo", stdout=StringIO())
    assert "; shop  IN CNAME domains.petstore.localhost." in demo_zone_file(tmp_path).read_text()
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "example.test.zone",
        "petstore.localhost.zone",
    ]


@pytest.mark.parametrize(
    ("entry", "host", "port"),
    [
        ("127.0.0.1:5353", "127.0.0.1", 5353),
        ("192.0.2.53", "192.0.2.53", 53),
        ("[::1]:5353", "::1", 5353),
        ("[::1]", "::1", 53),
        ("2001:db8::53", "2001:db8::53", 53),
    ],
)
def test_nameserver_setting_entries(entry, host, port, settings):
    settings.DOMAINS_DNS_NAMESERVERS = [entry]
    [server] = platform_dns.get_resolver().nameservers
    assert isinstance(server, Do53Nameserver)
    assert (server.address, server.port) == (host, port)


def test_the_devdns_command_serves_its_zone_directory_and_takes_updates_signed_with_its_key(
    tmp_path,
):
    # Below the ephemeral range: a port the kernel handed out could be taken for TCP by an
    # outgoing connection before devdns binds it.
    port = free_port()
    log = tmp_path / "devdns.log"
    # The key as `make run` writes it (devtools/localenv.py); the zone is DEBUG's default.
    key = {"DOMAINS_DNS01_TSIG_KEY_NAME": TSIG_KEY_NAME, "DOMAINS_DNS01_TSIG_SECRET": tsig_secret()}
    env = {
        **os.environ,
        **key,
        "SECRET_KEY": "x",
        "DEBUG": "1",
        "PETSTORE_VAR_DIR": str(tmp_path),
        "PETSTORE_ENV_FILE": "",
        "PLATFORM_DOMAIN": "petstore.localhost",
    }
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "devdns", "--port", str(port),
             "--zones", str(tmp_path / "zones")],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_for(lambda: b"devdns: serving" in log.read_bytes(), timeout=30, what="devdns")
        server = type("Server", (), {"host": "127.0.0.1", "port": port})
        # From the starter zones: the platform target resolves here, over UDP and TCP.
        assert ask(server, "domains.petstore.localhost", "A").answer
        assert ask(server, "domains.petstore.localhost", "A", tcp=True).answer
        assert (tmp_path / "zones" / "example.test.zone").exists()
        # The platform's DNS-01 provider, with the same key, writes in PLATFORM_DOMAIN's zone.
        provider = Rfc2136(
            server=f"127.0.0.1:{port}",
            zone="petstore.localhost",
            key_name=key["DOMAINS_DNS01_TSIG_KEY_NAME"],
            algorithm="hmac-sha256",
            secret=key["DOMAINS_DNS01_TSIG_SECRET"],
        )
        provider.present("_acme-challenge.petstore.localhost", "from-the-platform")
        answer = ask(server, "_acme-challenge.petstore.localhost", "TXT")
        assert [rdata.to_text() for rdata in answer.answer[0]] == ['"from-the-platform"']
        assert "updates signed with the key make-run." in log.read_text()
    finally:
        process.terminate()
        process.wait(timeout=10)
