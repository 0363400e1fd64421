"""All DNS of the platform goes through here: one dnspython resolver from settings.

It returns plain values and keeps apart the four outcomes that mean different
things to a domain owner: the name does not exist (NXDOMAIN), the name exists
without records of that type (no data), the server failed (SERVFAIL / refused)
and nobody answered in time (timeout). The last two are temporary.

`lookup_many()` asks many questions at once (the sweep's batches) and `lookup()` is
the same for one. The rules of a resolution are dnspython's own (the resolver's
`_Resolution`, shared by its blocking and asyncio resolvers): which answer ends a
question, when a nameserver is given up, the backoff, the lifetime, TCP after a
truncated answer. Only the waiting is ours, `_Pipeline`: one thread and one selector
for all the questions in flight, which costs about a quarter less CPU per question than
dnspython's asyncio resolver (docs/decisions/domain-sweep.md, third pass).
"""

from __future__ import annotations

import heapq
import itertools
import selectors
import socket
import time
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field

import dns.exception
import dns.inet
import dns.message
import dns.name
import dns.nameserver
import dns.rdataclass
import dns.rdatatype
import dns.resolver
from django.conf import settings

OK = "ok"
NODATA = "nodata"
NXDOMAIN = "nxdomain"
SERVFAIL = "servfail"
TIMEOUT = "timeout"
TEMPORARY = frozenset({SERVFAIL, TIMEOUT})


@dataclass(frozen=True)
class Lookup:
    name: str
    rdtype: str
    status: str
    # Records of the asked type owned by the name itself (not reached through a CNAME).
    values: tuple[str, ...] = ()
    # The final answer after following any CNAME chain (what a client would use).
    final: tuple[str, ...] = ()
    rdatas: tuple = field(default=(), compare=False, repr=False)
    error: str = ""

    @property
    def temporary(self) -> bool:
        return self.status in TEMPORARY


def _parse_nameserver(entry: str) -> dns.nameserver.Do53Nameserver:
    """`host`, `host:port` or `[ipv6]:port`; a bare IPv6 address needs the brackets for a port."""
    entry = entry.strip()
    host, port = entry, 53
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        port = int(rest[1:]) if rest.startswith(":") else 53
    elif entry.count(":") == 1:
        host, raw_port = entry.split(":")
        port = int(raw_port)
    return dns.nameserver.Do53Nameserver(host, port)


def _nameservers() -> list[dns.nameserver.Nameserver]:
    return [_parse_nameserver(entry) for entry in settings.DOMAINS_DNS_NAMESERVERS]


def _configure(resolver):
    servers = _nameservers()
    if servers:
        resolver.nameservers = servers
    resolver.timeout = settings.DOMAINS_DNS_TIMEOUT
    resolver.lifetime = settings.DOMAINS_DNS_LIFETIME
    return resolver


def get_resolver() -> dns.resolver.Resolver:
    """The platform's resolver: settings' nameservers (or the system's), timeout and lifetime.

    Built per call so a settings change (tests, reload) applies at once; it keeps
    no cache, so every check sees what the DNS says now.
    """
    return _configure(dns.resolver.Resolver(configure=not settings.DOMAINS_DNS_NAMESERVERS))


def _text(rdata) -> str:
    if rdata.rdtype in (dns.rdatatype.CNAME, dns.rdatatype.DNAME):
        return rdata.target.to_text(omit_final_dot=True).lower()
    if rdata.rdtype in (dns.rdatatype.A, dns.rdatatype.AAAA):
        return rdata.address
    return rdata.to_text()


def normalize(name: str) -> str:
    """Compare names the DNS way: case and the trailing dot aside."""
    return name.strip().lower().rstrip(".")


# The resolver's exceptions and the outcome each one means.
_FAILURES: tuple[tuple[type[Exception], str], ...] = (
    (dns.resolver.NXDOMAIN, NXDOMAIN),
    (dns.resolver.NoNameservers, SERVFAIL),
    (dns.exception.Timeout, TIMEOUT),
    (dns.resolver.YXDOMAIN, SERVFAIL),
)
_CAUGHT = tuple(kind for kind, _ in _FAILURES)
# Questions in flight at once in lookup_many(): enough to hide the round trips,
# few enough not to overrun a nameserver's (or our loopback server's) UDP buffer.
MAX_IN_FLIGHT = 100


def _failed(name: str, rdtype: str, exc: Exception) -> Lookup:
    status = next(status for kind, status in _FAILURES if isinstance(exc, kind))
    return Lookup(name, rdtype, status, error="" if status == NXDOMAIN else str(exc))


def _answered(flight: _Flight, answer: dns.resolver.Answer) -> Lookup:
    owned = tuple(
        _text(rdata)
        for rrset in answer.response.answer
        if rrset.name == flight.qname and rrset.rdtype == flight.wanted
        for rdata in rrset
    )
    rdatas = tuple(answer.rrset) if answer.rrset is not None else ()
    final = tuple(_text(rdata) for rdata in rdatas)
    status = OK if rdatas else NODATA
    return Lookup(flight.name, flight.rdtype, status, values=owned, final=final, rdatas=rdatas)


def lookup(name: str, rdtype: str) -> Lookup:
    """Ask one question and wait for its answer."""
    return lookup_many([(name, rdtype)])[(name, rdtype)]


def lookup_many(questions: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Lookup]:
    """Ask every (name, type) question at once, at most MAX_IN_FLIGHT in flight; the same
    Lookup for a question whether it is asked alone or with others."""
    unique = list(dict.fromkeys(questions))
    if not unique:
        return {}
    with _Pipeline(get_resolver()) as pipeline:
        return pipeline.run(unique)


# What a resolution asks of its driver (see _resolution): wait, or send a query and
# give back (response, None) or (None, the exception the transport raised).
@dataclass(frozen=True)
class _Sleep:
    seconds: float


@dataclass(frozen=True)
class _Query:
    nameserver: dns.nameserver.Nameserver
    request: dns.message.QueryMessage
    tcp: bool
    timeout: float


def _resolution(resolver: dns.resolver.Resolver, qname: dns.name.Name, rdtype) -> Generator:
    """dnspython's `Resolver.resolve()` loop with the I/O taken out: the rules (which
    rcode ends the question, when a nameserver is dropped, the backoff between rounds,
    the lifetime, TCP after truncation) stay dnspython's own, in `_Resolution`, the helper
    its blocking and asyncio resolvers share. Yields _Sleep or _Query; returns the Answer,
    or raises what `resolve()` raises."""
    resolution = dns.resolver._Resolution(
        resolver, qname, rdtype, dns.rdataclass.IN, False, False, False
    )
    start = time.time()
    while True:
        request, answer = resolution.next_request()
        if answer is not None:  # from a cache (ours keep none)
            return answer
        done = False
        while not done:
            nameserver, tcp, backoff = resolution.next_nameserver()
            if backoff:
                yield _Sleep(backoff)
            request.set_random_id()
            timeout = resolver._compute_timeout(start, None, resolution.errors)
            response, error = yield _Query(nameserver, request, tcp, timeout)
            if error is not None:
                _, done = resolution.query_result(None, error)
                continue
            answer, done = resolution.query_result(response, None)
            if answer is not None:
                return answer


@dataclass(eq=False)
class _Flight:
    """One question on its way: its resolution and, while a UDP query waits, its socket."""

    name: str
    rdtype: str
    qname: dns.name.Name
    wanted: dns.rdatatype.RdataType
    steps: Generator
    query: _Query | None = None
    sock: socket.socket | None = None
    # Bumped whenever the flight moves on, so a timer set for an earlier wait is ignored.
    turn: int = 0


class _Pipeline:
    """Drives many resolutions at once from one thread with one selector.

    Each UDP query gets its own socket (a fresh source port per query, as dnspython's
    own `dns.query.udp` does) and keeps listening past datagrams from elsewhere or that
    are not the answer to it, until its timeout. A query over TCP (after a truncated
    answer, rare) is asked the blocking way, as dnspython asks it.
    """

    def __init__(self, resolver: dns.resolver.Resolver) -> None:
        self.resolver = resolver
        self.selector = selectors.DefaultSelector()
        self.timers: list[tuple[float, int, int, _Flight]] = []
        self.order = itertools.count()
        self.found: dict[tuple[str, str], Lookup] = {}
        self.in_flight = 0

    def __enter__(self) -> _Pipeline:
        return self

    def __exit__(self, *exc_info) -> None:
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()
        self.selector.close()

    def run(self, questions: list[tuple[str, str]]) -> dict[tuple[str, str], Lookup]:
        waiting = iter(questions)
        while True:
            while self.in_flight < MAX_IN_FLIGHT and (question := next(waiting, None)):
                self._start(*question)
            if not self.in_flight:
                return self.found
            self._wait()

    def _start(self, name: str, rdtype: str) -> None:
        qname, wanted = dns.name.from_text(name), dns.rdatatype.from_text(rdtype)
        steps = _resolution(self.resolver, qname, wanted)
        self.in_flight += 1
        self._advance(_Flight(name, rdtype, qname, wanted, steps), None)

    def _advance(self, flight: _Flight, reply) -> None:
        """Give the resolution what its last step got; carry out its next step."""
        flight.turn += 1
        while True:
            try:
                step = flight.steps.send(reply)
            except StopIteration as done:
                return self._finish(flight, _answered(flight, done.value))
            except _CAUGHT as exc:
                return self._finish(flight, _failed(flight.name, flight.rdtype, exc))
            if isinstance(step, _Sleep):
                return self._timer(step.seconds, flight)
            if step.tcp or not isinstance(step.nameserver, dns.nameserver.Do53Nameserver):
                reply = _blocking(step)
                continue
            reply = self._send(flight, step)
            if reply is None:
                return self._timer(step.timeout, flight)

    def _finish(self, flight: _Flight, found: Lookup) -> None:
        self.found[(flight.name, flight.rdtype)] = found
        self.in_flight -= 1

    def _timer(self, seconds: float, flight: _Flight) -> None:
        when = time.monotonic() + seconds
        heapq.heappush(self.timers, (when, next(self.order), flight.turn, flight))

    def _send(self, flight: _Flight, query: _Query):
        """Send the query on a socket of its own; None once it is sent, else the error."""
        address = query.nameserver.address
        sock = socket.socket(dns.inet.af_for_address(address), socket.SOCK_DGRAM)
        sock.setblocking(False)
        try:
            sock.sendto(query.request.to_wire(), (address, query.nameserver.port))
        except OSError as exc:
            sock.close()
            return None, exc
        flight.query, flight.sock = query, sock
        self.selector.register(sock, selectors.EVENT_READ, flight)
        return None

    def _close(self, flight: _Flight) -> None:
        self.selector.unregister(flight.sock)
        flight.sock.close()
        flight.query = flight.sock = None

    def _wait(self) -> None:
        """Wait for the next answer or the next timer, and act on what came."""
        timeout = max(0.0, self.timers[0][0] - time.monotonic()) if self.timers else None
        for key, _ in self.selector.select(timeout):
            flight = key.data
            reply = _receive(flight.sock, flight.query)
            if reply is not None:
                self._close(flight)
                self._advance(flight, reply)
        now = time.monotonic()
        while self.timers and self.timers[0][0] <= now:
            _, _, turn, flight = heapq.heappop(self.timers)
            if turn != flight.turn:
                continue  # answered (or moved on) before this timer came due
            if flight.sock is None:  # the end of a backoff
                self._advance(flight, None)
                continue
            timeout = flight.query.timeout
            self._close(flight)
            self._advance(flight, (None, dns.exception.Timeout(timeout=timeout)))


def _receive(sock: socket.socket, query: _Query):
    """The reply to `query` among the datagrams waiting on its socket, as (response, None)
    or (None, error); None while there is none yet. Like dnspython's `receive_udp` with
    `ignore_unexpected` and `ignore_errors`: datagrams from another address, that do not
    parse or that answer another question are skipped; a truncated answer is an error
    (the resolution asks again over TCP)."""
    request, nameserver = query.request, query.nameserver
    while True:
        try:
            wire, source = sock.recvfrom(65535)
        except BlockingIOError:
            return None
        except OSError as exc:
            return None, exc
        if not _same_peer(sock.family, source, nameserver):
            continue
        try:
            response = dns.message.from_wire(wire, raise_on_truncation=True)
        except dns.message.Truncated as exc:
            if request.is_response(exc.message()):
                return None, exc
            continue
        except Exception:  # noqa: BLE001, S112 - garbage from the network is skipped, as dnspython does
            continue
        if request.is_response(response):
            return response, None


def _same_peer(family: int, source: tuple, nameserver: dns.nameserver.Do53Nameserver) -> bool:
    """Did this datagram come from the nameserver (its address, however it is spelled)?"""
    if source[1] != nameserver.port:
        return False
    if source[0] == nameserver.address:
        return True
    try:
        return dns.inet.inet_pton(family, source[0]) == dns.inet.inet_pton(
            family, nameserver.address
        )
    except ValueError:  # an address with a scope (fe80::1%eth0) that did not match as text
        return False


def _blocking(query: _Query):
    try:
        response = query.nameserver.query(
            query.request, timeout=query.timeout, source=None, source_port=0, max_size=query.tcp
        )
    except Exception as exc:  # noqa: BLE001 - handed to the resolution, as dnspython does
        return None, exc
    return response, None
