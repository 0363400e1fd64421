"""All DNS of the platform goes through here: one dnspython resolver from settings.

It returns plain values and keeps apart the four outcomes that mean different
things to a domain owner: the name does not exist (NXDOMAIN), the name exists
without records of that type (no data), the server failed (SERVFAIL / refused)
and nobody answered in time (timeout). The last two are temporary.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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


def get_resolver() -> dns.resolver.Resolver:
    """The platform's resolver: settings' nameservers (or the system's), timeout and lifetime.

    Built per call so a settings change (tests, reload) applies at once; it keeps
    no cache, so every check sees what the DNS says now.
    """
    servers = _nameservers()
    resolver = dns.resolver.Resolver(configure=not servers)
    if servers:
        resolver.nameservers = servers
    resolver.timeout = settings.DOMAINS_DNS_TIMEOUT
    resolver.lifetime = settings.DOMAINS_DNS_LIFETIME
    return resolver


def _text(rdata) -> str:
    if rdata.rdtype in (dns.rdatatype.CNAME, dns.rdatatype.DNAME):
        return rdata.target.to_text(omit_final_dot=True).lower()
    if rdata.rdtype in (dns.rdatatype.A, dns.rdatatype.AAAA):
        return rdata.address
    return rdata.to_text()


def normalize(name: str) -> str:
    """Compare names the DNS way: case and the trailing dot aside."""
    return name.strip().lower().rstrip(".")


def lookup(name: str, rdtype: str) -> Lookup:
    qname = dns.name.from_text(name)
    wanted = dns.rdatatype.from_text(rdtype)
    try:
        answer = get_resolver().resolve(qname, wanted, raise_on_no_answer=False, search=False)
    except dns.resolver.NXDOMAIN:
        return Lookup(name, rdtype, NXDOMAIN)
    except dns.resolver.NoNameservers as exc:
        return Lookup(name, rdtype, SERVFAIL, error=str(exc))
    except dns.exception.Timeout as exc:
        return Lookup(name, rdtype, TIMEOUT, error=str(exc))
    except dns.resolver.YXDOMAIN as exc:
        return Lookup(name, rdtype, SERVFAIL, error=str(exc))
    owned = tuple(
        _text(rdata)
        for rrset in answer.response.answer
        if rrset.name == qname and rrset.rdtype == wanted
        for rdata in rrset
    )
    rdatas = tuple(answer.rrset) if answer.rrset is not None else ()
    final = tuple(_text(rdata) for rdata in rdatas)
    return Lookup(name, rdtype, OK if rdatas else NODATA, values=owned, final=final, rdatas=rdatas)
