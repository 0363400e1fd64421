"""What a DNS answer says, as the platform reads it: the outcomes a question can have and
the Lookup that holds one, read from a dnspython response (the name's own records, the end
of its CNAME chain, how long a negative answer may be kept). domains/dns/lookups.py asks;
this module only reads, so both the resolver's answers and a zone's own servers' answers
(the doctor's) are read the same way."""

from __future__ import annotations

from dataclasses import dataclass, field

import dns.flags
import dns.message
import dns.name
import dns.rdata
import dns.rdatatype
import dns.rrset
from dns.rdtypes.ANY.CNAME import CNAME
from dns.rdtypes.ANY.DNAME import DNAME
from dns.rdtypes.IN.A import A
from dns.rdtypes.IN.AAAA import AAAA

from domains.dns import hostnames

OK = "ok"
NODATA = "nodata"
NXDOMAIN = "nxdomain"
SERVFAIL = "servfail"
TIMEOUT = "timeout"
# The question cannot be put (the name is too long, a label too long or empty): permanent.
UNASKABLE = "unaskable"
# Not asked: the server's address is one the platform may not reach on a tenant's say
# (domains/outbound.py); no packet leaves for it.
FENCED = "fenced"
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
    # False when the lifetime ran out before the question's turn: nobody was asked.
    asked: bool = True
    # The name's own CNAME target, where an answer to a question of another type shows it.
    cname: tuple[str, ...] = ()
    # Seconds the answer may still be kept: its records' (the name's own, else the final
    # ones), or a negative answer's (the zone's SOA); None when nothing said.
    ttl: int | None = field(default=None, compare=False)
    # The answer did not fit one UDP datagram and was not fetched again over TCP (a question
    # of a Group that is not `whole`): `values` holds what the datagram did, maybe nothing.
    truncated: bool = False

    @property
    def temporary(self) -> bool:
        return self.status in TEMPORARY


def read(
    response: dns.message.Message,
    qname: dns.name.Name,
    wanted: int,
    name: str,
    rdtype: str,
    final_rrset: dns.rrset.RRset | None,
) -> Lookup:
    """A NOERROR response as a Lookup: the name's own records, the end of its chain."""
    owned = [rrset for rrset in response.answer if rrset.name == qname]
    values = tuple(_text(rdata) for rrset in owned if rrset.rdtype == wanted for rdata in rrset)
    cname = tuple(
        _text(rdata) for rrset in owned if rrset.rdtype == dns.rdatatype.CNAME for rdata in rrset
    )
    rdatas = tuple(final_rrset) if final_rrset is not None else ()
    final = tuple(_text(rdata) for rdata in rdatas)
    truncated = bool(response.flags & dns.flags.TC)
    if not rdatas:
        ttl = min((rrset.ttl for rrset in owned), default=None)
        ttl = negative_ttl(response) if ttl is None else ttl
        return Lookup(
            name, rdtype, NODATA, values=values, cname=cname, ttl=ttl, truncated=truncated
        )
    ttl = min(rrset.ttl for rrset in owned) if owned or final_rrset is None else final_rrset.ttl
    return Lookup(
        name, rdtype, OK, values=values, final=final, rdatas=rdatas, cname=cname, ttl=ttl,
        truncated=truncated,
    )  # fmt: skip


def chain_end(
    response: dns.message.Message, qname: dns.name.Name, wanted: int
) -> dns.rrset.RRset | None:
    """The records of the asked type at the end of the name's CNAME chain in `response`."""
    name = qname
    for _ in range(16):
        for rrset in response.answer:
            if rrset.name == name and rrset.rdtype == wanted:
                return rrset
        cnames = [
            rrset
            for rrset in response.answer
            if rrset.name == name and rrset.rdtype == dns.rdatatype.CNAME
        ]
        if not cnames:
            return None
        name = next(iter(cnames[0])).target
    return None


def negative_ttl(response: dns.message.Message | None) -> int | None:
    """How long a "no such name / no such record" may be kept (RFC 2308: the SOA's TTL,
    at most its minimum field)."""
    if response is None:
        return None
    for rrset in response.authority:
        if rrset.rdtype == dns.rdatatype.SOA:
            return min(rrset.ttl, next(iter(rrset)).minimum)
    return None


def _text(rdata: dns.rdata.Rdata) -> str:
    if isinstance(rdata, (CNAME, DNAME)):
        return hostnames.comparable(rdata.target.to_text())
    if isinstance(rdata, (A, AAAA)):
        return rdata.address
    return rdata.to_text()
