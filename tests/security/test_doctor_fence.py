"""The domain doctor asks a zone's own name servers, which the tenant chooses, so it meets the
platform's one address policy (domains/outbound.py), as webhooks do: a name server at an
address that is not public (loopback, private, shared, link-local, metadata, ULA, the IPv6
forms that wrap them) or the platform's own gets no packet, UDP or TCP, and the diagnosis
says it was not asked, without its address or whether anything answers there. A name
server whose name the public DNS cannot resolve is not even looked up. Loopback stands for
a public server only where OUTBOUND_ALLOWED_NETWORKS says so (the `zone` fixture, as
DEBUG's default); here it is narrowed to the zone's two answering servers.

No packet is checked at the socket: every address a socket of this process sends a
datagram to or connects to while a check runs is recorded by Python's own audit events
(`socket.sendto`, `socket.connect`), which the socket module raises whatever library holds
the socket, so a range no test can listen on (10/8, the metadata address) is checked too."""

from __future__ import annotations

import ipaddress
import json
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.utils import timezone

from domains import outbound
from domains.choices import CheckCode
from domains.dns import diagnosis as diagnosis_of
from domains.dns import doctor, lookups
from domains.policy import DOCTOR_NAMESERVERS
from petstore.sentences import Sentence
from tests.fixtures.domains import TARGET, check
from tests.fixtures.nameservers import ADDRESSES, NS1, ZONE

pytestmark = pytest.mark.django_db
WWW = f"www.{ZONE}"
# One address in every range the policy refuses.
REFUSED = [
    "10.0.0.53", "192.168.1.1", "172.16.0.1", "169.254.169.254", "100.64.0.1", "127.0.0.1",
    "0.0.0.0", "224.0.0.251", "fd00:ec2::254", "fe80::1", "::1", "::ffff:10.0.0.53",
    "64:ff9b::a00:35", "2002:a00:35::1", "::a00:35", "64:ff9b:1::1", "fec0::1",
]  # fmt: skip
# The loopback address that stands for a tenant's private server: refused, and listened on.
HIDDEN = "127.0.0.9"
# Where the sockets of this process send and connect, while a test's `sent` is open (one
# list then, none otherwise). Python's audit hooks cannot be removed: one is added, once.
_recording: list[list[tuple[str, int]]] = []
_SOCKET_EVENTS = frozenset({"socket.sendto", "socket.sendmsg", "socket.connect"})


def _record(event: str, args: tuple[Any, ...]) -> None:
    if _recording and event in _SOCKET_EVENTS and isinstance(args[1], tuple):
        _recording[0].append((str(args[1][0]), int(args[1][1])))


sys.addaudithook(_record)


@pytest.fixture
def sent() -> Iterator[list[tuple[str, int]]]:
    """Each (address, port) a socket of this process sends to or connects to meanwhile:
    the platform's resolvers and services as well as a zone's servers (`to_servers`)."""
    recorded: list[tuple[str, int]] = []
    _recording.append(recorded)
    yield recorded
    _recording.remove(recorded)


def to_servers(
    sent: list[tuple[str, int]], settings
) -> set[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The addresses sent to on the port a zone's servers are asked on, but the resolvers'."""
    resolvers = {tuple(entry.rsplit(":", 1)) for entry in settings.DOMAINS_DNS_NAMESERVERS}
    port = settings.DOMAINS_DNS_AUTHORITATIVE_PORT
    return {
        ipaddress.ip_address(address)
        for address, to in sent
        if to == port and (address, str(to)) not in resolvers
    }


@dataclass
class Listener:
    """A UDP socket and a TCP listener on HIDDEN, on the port the doctor asks."""

    udp: socket.socket
    tcp: socket.socket

    def received(self) -> list[str]:
        got = []
        for sock, take in ((self.udp, lambda s: s.recv(4096)), (self.tcp, lambda s: s.accept())):
            sock.setblocking(False)
            try:
                take(sock)
            except BlockingIOError:
                continue
            got.append(sock.type.name)
        return got


@pytest.fixture
def listener(zone, settings) -> Iterator[Listener]:
    port = settings.DOMAINS_DNS_AUTHORITATIVE_PORT
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind((HIDDEN, port))
    tcp = socket.create_server((HIDDEN, port))
    yield Listener(udp, tcp)
    udp.close()
    tcp.close()


@pytest.fixture
def narrowed(zone, settings):
    """Loopback allowed only for ns1 and ns2 (127.0.0.2, 127.0.0.3): any other loopback
    address is as private as 10.0.0.53."""
    settings.OUTBOUND_ALLOWED_NETWORKS = [ipaddress.ip_network("127.0.0.2/31")]
    return zone


def delegate(zone, servers: dict[str, list[str]]) -> None:
    """The zone's NS records, as the resolvers see them: ns1 and `servers` (name: addresses)."""
    zone.resolver.remove(ZONE, "NS")
    zone.resolver.add(ZONE, "NS", f"{NS1}.", *(f"{name}." for name in servers))
    for name, addresses in servers.items():
        for address in addresses:
            kind = "AAAA" if ":" in address else "A"
            zone.resolver.add(name, kind, address)


def diagnosis(domain) -> dict[str, Any]:
    assert domain.check_diagnosis is not None
    return domain.check_diagnosis


def rows(domain) -> dict[str, tuple[str, str]]:
    servers = diagnosis(domain)["nameservers"]
    return {s["name"]: (s["address"], s["answer"]) for s in servers}


def test_a_server_at_a_refused_loopback_address_gets_no_packet(
    narrowed, listener, www, sent, settings
):
    delegate(narrowed, {f"ns9.{ZONE}": [HIDDEN]})
    narrowed.resolver.add(WWW, "CNAME", TARGET + ".")
    narrowed.serve(WWW, "CNAME", TARGET + ".", on=(NS1,))
    domain = check(www)
    assert listener.received() == []
    # The record sees the doctor's sockets: the one allowed server, and nothing else.
    assert to_servers(sent, settings) == {ipaddress.ip_address(ADDRESSES[NS1])}
    assert narrowed.server(NS1).queries  # the allowed server was asked, in the same check
    assert rows(domain) == {
        NS1: (ADDRESSES[NS1], f"CNAME {TARGET}."),
        f"ns9.{ZONE}": ("", doctor.NOT_PUBLIC_ADDRESS),
    }
    assert HIDDEN not in json.dumps(domain.check_diagnosis)
    assert diagnosis(domain)["findings"] == []


# The doctor asks DOCTOR_NAMESERVERS names of a zone (ns1 among them): the ranges go in turns.
IN_TURN = DOCTOR_NAMESERVERS - 1


@pytest.mark.parametrize("first", range(0, len(REFUSED), IN_TURN))
def test_servers_in_every_refused_range_are_not_asked_nor_shown(zone, settings, www, sent, first):
    settings.OUTBOUND_ALLOWED_NETWORKS = []  # production's
    turn = list(enumerate(REFUSED))[first : first + IN_TURN]
    servers = {f"ns-{n}.{ZONE}": [address] for n, address in turn}
    delegate(zone, servers)
    domain = check(www)
    # The resolver was asked, through sockets the record sees; the servers were not.
    assert (zone.resolver.host, zone.resolver.port) in sent
    assert to_servers(sent, settings) == set()
    assert rows(domain) == dict.fromkeys([*servers, NS1], ("", doctor.NOT_PUBLIC_ADDRESS))
    text = json.dumps(domain.check_diagnosis)
    assert not [address for address in REFUSED if f'"{address}"' in text]
    assert not zone.server(NS1).queries


def test_the_seam_itself_sends_nothing_to_a_refused_address(settings, listener, sent):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    asked = [(WWW, "A", address) for address in [*REFUSED, HIDDEN]]
    answers = lookups.lookup_many(asked)
    assert {answer.status for answer in answers.values()} == {lookups.FENCED}
    assert listener.received() == []
    assert to_servers(sent, settings) == set()


def test_a_name_server_outside_the_public_dns_is_not_looked_up(narrowed, www):
    delegate(narrowed, {"ns1.corp.internal": ["10.20.30.40"]})
    domain = check(www)
    assert rows(domain)["ns1.corp.internal"] == ("", doctor.NOT_PUBLIC_NAME)
    assert not [q for q in narrowed.resolver.queries if q[0] == "ns1.corp.internal"]
    assert "10.20.30.40" not in json.dumps(domain.check_diagnosis)


def test_a_name_server_with_public_and_refused_addresses_is_asked_at_the_public_one_only(
    narrowed, listener, www
):
    delegate(narrowed, {f"ns9.{ZONE}": [HIDDEN, ADDRESSES[NS1]]})
    servers = diagnosis(check(www))["nameservers"]
    assert listener.received() == []
    assert [(s["address"], s["answer"]) for s in servers if s["name"] == f"ns9.{ZONE}"] == [
        (ADDRESSES[NS1], "no record"),
        ("", doctor.NOT_PUBLIC_ADDRESS),
    ]


@pytest.mark.parametrize("address", REFUSED)
def test_the_policy_refuses_every_range(settings, address):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    assert outbound.refusal(address) == outbound.NOT_PUBLIC


def test_the_platforms_own_addresses_are_refused_and_loopback_only_by_setting(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    own = outbound.platform_addresses(lambda name: ["8.8.4.4"] if name == TARGET else [])
    assert own == {ipaddress.ip_address("8.8.4.4")}
    assert outbound.refusal("8.8.4.4", platform=own) == outbound.PLATFORM
    assert outbound.refusal("::ffff:8.8.4.4", platform=own) == outbound.PLATFORM
    assert outbound.refusal("8.8.8.8", platform=own) == outbound.ALLOWED
    settings.OUTBOUND_ALLOWED_NETWORKS = [ipaddress.ip_network("127.0.0.0/8")]
    assert outbound.refusal("127.0.0.1") == outbound.ALLOWED
    assert outbound.refusal("::1") == outbound.NOT_PUBLIC
    assert outbound.refusal("10.0.0.53") == outbound.NOT_PUBLIC


def test_a_name_server_at_the_platforms_own_address_is_neither_asked_nor_shown(settings):
    """Worked out from answers alone (no packet either way): the zone's NS answer, its
    server's address, which is the CNAME target's, a public one."""
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    own = "8.8.4.4"  # stands for the platform's public address; never sent to
    answers: dict[lookups.Question, lookups.Lookup] = {
        (WWW, "A"): lookups.Lookup(WWW, "A", lookups.NODATA),
        (ZONE, "NS"): lookups.Lookup(ZONE, "NS", lookups.OK, values=(f"{NS1}.",)),
        (NS1, "A"): lookups.Lookup(NS1, "A", lookups.OK, values=(own,), final=(own,)),
        (TARGET, "A"): lookups.Lookup(TARGET, "A", lookups.OK, values=(own,), final=(own,)),
    }
    seen: dict[lookups.Question, lookups.Lookup] = {}

    def answered(question: lookups.Question) -> lookups.Lookup:
        nothing = lookups.Lookup(question[0], question[1], lookups.NODATA)
        return seen.setdefault(question, answers.get(question, nothing))

    step: Any = doctor.chain(WWW, is_apex=False, txt=False)
    while not isinstance(step, list):  # each step as lookups.lookup_groups takes it
        step = step.then({question: answered(question) for question in step.questions})
    assert step == []  # nothing to ask directly
    result = diagnosis_of.CheckResult(CheckCode.NO_RECORD, Sentence("No CNAME yet."))
    shown = doctor.diagnose(
        WWW, is_apex=False, result=result, get=seen.get, lookup=lambda n, t: answered((n, t)),
        token=None, now=timezone.now(),
    )  # fmt: skip
    assert shown["nameservers"] == [
        {
            "name": NS1,
            "address": "",
            "answer": doctor.NOT_PUBLIC_ADDRESS,
            "ttl": None,
            "agrees": False,
        }
    ]
    assert own not in json.dumps(shown)
