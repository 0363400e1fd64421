"""All DNS of the platform goes through here: one dnspython resolver from settings.

It returns plain values and keeps apart the four outcomes that mean different
things to a domain owner: the name does not exist (NXDOMAIN), the name exists
without records of that type (no data), the server failed (SERVFAIL / refused)
and nobody answered in time (timeout). The last two are temporary.

`lookup()` asks one question and waits; `lookup_many()` asks many at once with
dnspython's asyncio resolver (same nameservers, timeout and lifetime) and gives
the same Lookup for each, for the batch checks of the sweep.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field

import dns.asyncresolver
import dns.exception
import dns.name
import dns.nameserver
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


def get_async_resolver() -> dns.asyncresolver.Resolver:
    """The same resolver for asyncio: same nameservers, timeout and lifetime, no cache."""
    return _configure(dns.asyncresolver.Resolver(configure=not settings.DOMAINS_DNS_NAMESERVERS))


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


def _answered(name: str, rdtype: str, qname, wanted, answer) -> Lookup:
    owned = tuple(
        _text(rdata)
        for rrset in answer.response.answer
        if rrset.name == qname and rrset.rdtype == wanted
        for rdata in rrset
    )
    rdatas = tuple(answer.rrset) if answer.rrset is not None else ()
    final = tuple(_text(rdata) for rdata in rdatas)
    return Lookup(name, rdtype, OK if rdatas else NODATA, values=owned, final=final, rdatas=rdatas)


def lookup(name: str, rdtype: str) -> Lookup:
    qname = dns.name.from_text(name)
    wanted = dns.rdatatype.from_text(rdtype)
    try:
        answer = get_resolver().resolve(qname, wanted, raise_on_no_answer=False, search=False)
    except _CAUGHT as exc:
        return _failed(name, rdtype, exc)
    return _answered(name, rdtype, qname, wanted, answer)


def lookup_many(questions: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Lookup]:
    """Ask every (name, type) question concurrently; the same Lookup `lookup()` gives for each.

    Runs its own event loop (call it from synchronous code, such as a Celery task).
    """
    unique = list(dict.fromkeys(questions))
    if not unique:
        return {}
    return asyncio.run(_lookup_all(unique))


async def _lookup_all(questions: list[tuple[str, str]]) -> dict[tuple[str, str], Lookup]:
    resolver = get_async_resolver()
    gate = asyncio.Semaphore(MAX_IN_FLIGHT)

    async def one(name: str, rdtype: str) -> Lookup:
        qname = dns.name.from_text(name)
        wanted = dns.rdatatype.from_text(rdtype)
        async with gate:
            try:
                answer = await resolver.resolve(
                    qname, wanted, raise_on_no_answer=False, search=False
                )
            except _CAUGHT as exc:
                return _failed(name, rdtype, exc)
        return _answered(name, rdtype, qname, wanted, answer)

    found = await asyncio.gather(*(one(name, rdtype) for name, rdtype in questions))
    return dict(zip(questions, found, strict=True))
