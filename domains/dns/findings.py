"""The domain doctor's findings: what the answers of a zone's own name servers
(domains/dns/doctor.py) mean for the owner, and the owner's words for each, in one place
(docs/decisions/domains.md, "The domain doctor", says what each means and what to do).
Codes: domains.choices.FindingCode.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from domains.choices import CheckCode, FindingCode
from domains.dns import hostnames, lookups
from domains.policy import DOCTOR_ADDRESSES_PER_NAMESERVER, DOCTOR_NAMESERVERS

# The check codes whose cause can be an old answer a resolver still keeps.
POINTING_CODES = frozenset(
    {
        CheckCode.NO_RECORD,
        CheckCode.NXDOMAIN,
        CheckCode.WRONG_TARGET,
        CheckCode.CONFLICTING_RECORD,
    }
)


class Result(Protocol):
    """A check's result (diagnosis.CheckResult), as far as the doctor reads it."""

    @property
    def code(self) -> str: ...

    @property
    def found(self) -> str: ...

    @property
    def ok(self) -> bool: ...


@dataclass(frozen=True)
class Server:
    """One address of one of the zone's name servers, and what it said."""

    name: str
    address: str
    answer: str
    ttl: int | None
    agrees: bool
    # It did not answer (or has no address, or did not serve the zone).
    silent: bool = False
    # Asked too late: the check's deadline was spent before its turn.
    unasked: bool = False
    # Not asked by the platform's rule: its name or its address is not public.
    refused: bool = False
    # Its A and AAAA records that are not the platform's (an apex beside the right ones).
    extra: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "address": self.address,
            "answer": self.answer,
            "ttl": self.ttl,
            "agrees": self.agrees,
        }


@dataclass(frozen=True)
class Needs:
    """What the platform needs of the name: the CNAME target, or the apex's addresses."""

    target: str
    addresses: frozenset[str]
    is_apex: bool
    token: str | None

    @property
    def described(self) -> str:
        if self.is_apex:
            return ", ".join(address_records(self.addresses)) or f"ALIAS {self.target}."
        return f"CNAME {self.target}."


@dataclass(frozen=True)
class LeftOut:
    """What the doctor's caps (domains.policy) kept it from asking: of the zone's
    `nameservers` names, the ones past DOCTOR_NAMESERVERS (`names`), and how many addresses
    of each name asked were past DOCTOR_ADDRESSES_PER_NAMESERVER (`addresses`)."""

    nameservers: int = 0
    names: tuple[str, ...] = ()
    addresses: tuple[tuple[str, int], ...] = ()


# Names a finding lists at most, the rest counted: a zone may list any number.
NAMED_AT_MOST = 5


def address_records(addresses: frozenset[str] | set[str]) -> list[str]:
    """Addresses as records a person reads: `A 192.0.2.1`, `AAAA 2001:db8::1`."""
    return sorted(f"{'AAAA' if ':' in a else 'A'} {a}" for a in addresses)


def findings(
    hostname: str,
    zone: str,
    servers: list[Server],
    needs: Needs,
    result: Result,
    lookup: Callable[[str, str], lookups.Lookup],
    now: datetime,
    left_out: LeftOut | None = None,
) -> list[dict[str, Any]]:
    """What the servers' answers, and the resolvers' beside them, mean for the owner: each
    finding as stored ({code, message, nameservers, records}); none when all is well."""
    found = []
    left_out = left_out or LeftOut()
    silent = [server for server in servers if server.silent]
    answered = [s for s in servers if not (s.silent or s.unasked or s.refused)]
    right = [server for server in answered if server.agrees]
    wrong = [server for server in answered if not server.agrees]
    if silent:
        found.append(_unreachable(zone, silent))
    if right and wrong:
        found.append(_disagree(zone, right, wrong, needs))
    if answered and not wrong and result.code in POINTING_CODES:
        old = _resolver_answers(hostname, needs, lookup)
        found.append(_cached(zone, needs, result, old, now))
    beside = {record for server in answered for record in server.extra}
    extra = sorted(beside | set(_resolver_extra(hostname, needs, lookup)))
    if extra:
        found.append(_extra(hostname, extra))
    late = [server for server in servers if server.unasked]
    if left_out.names or left_out.addresses or late:
        found.append(_unasked(zone, left_out, late))
    return found


def _resolver_answers(
    hostname: str, needs: Needs, lookup: Callable[[str, str], lookups.Lookup]
) -> list[lookups.Lookup]:
    kinds = ("A", "AAAA") if needs.is_apex else ("CNAME", "A", "AAAA")
    return [lookup(hostname, rdtype) for rdtype in kinds]


def _resolver_extra(
    hostname: str, needs: Needs, lookup: Callable[[str, str], lookups.Lookup]
) -> list[str]:
    """The A and AAAA records the resolvers give beside the right ones."""
    a, aaaa = lookup(hostname, "A"), lookup(hostname, "AAAA")
    if needs.is_apex:
        seen = set(a.final) | set(aaaa.final)
        return address_records(seen - needs.addresses) if seen & needs.addresses else []
    cname = lookup(hostname, "CNAME")
    if needs.target not in {hostnames.comparable(value) for value in cname.values}:
        return []
    return address_records(set(a.values) | set(aaaa.values))


# --- The owner's words ------------------------------------------------------------------


def _names(servers: list[Server]) -> list[str]:
    return sorted({server.name for server in servers})


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _unreachable(zone: str, silent: list[Server]) -> dict[str, Any]:
    names = _names(silent)
    verb = _verb(names, "does", "do")
    return {
        "code": FindingCode.NAMESERVER_UNREACHABLE,
        "message": (
            f"{_listed(names)}, listed as a name server of {zone}, {verb} not answer for it "
            "(a lame delegation). Resolvers that ask it wait, then try another, and a "
            "certificate authority may give up. Fix that server at your DNS provider, or "
            f"remove it from {zone}'s NS records at your registrar."
        ),
        "nameservers": names,
        "records": [],
    }


def _disagree(zone: str, right: list[Server], wrong: list[Server], needs: Needs) -> dict[str, Any]:
    names, good = _names(wrong), _names(right)
    answers = sorted({server.answer for server in wrong})
    return {
        "code": FindingCode.NAMESERVERS_DISAGREE,
        "message": (
            f"The name servers of {zone} disagree: {_listed(good)} "
            f"{_verb(good, 'gives', 'give')} the right record ({needs.described}), but "
            f"{_listed(names)} still {_verb(names, 'gives', 'give')} another answer "
            f"({'; '.join(answers)}). Resolvers ask any of them, so some visitors and the "
            "certificate authority get the old answer. Make the change again at your DNS "
            "provider so it reaches every name server (or ask them why it has not)."
        ),
        "nameservers": names,
        "records": answers,
    }


def _verb(subjects: list[str], one: str, many: str) -> str:
    return one if len(subjects) == 1 else many


def _cached(
    zone: str, needs: Needs, result: Result, old: list[lookups.Lookup], now: datetime
) -> dict[str, Any]:
    ttls = [answer.ttl for answer in old if answer.ttl is not None]
    # `found` joins records with "; " (a subdomain's) or ", " (an apex's addresses).
    records = [record for record in re.split(r"; |, ", result.found) if record]
    said = ", ".join(records) or "no record"
    if ttls:
        seconds = math.ceil((now + timedelta(seconds=max(ttls))).timestamp() / 60) * 60
        gone = datetime.fromtimestamp(seconds, tz=now.tzinfo)
        when = f"It should be gone by {gone:%Y-%m-%d %H:%M} UTC, when its time to live runs out"
    else:
        when = "It goes when its time to live runs out"
    return {
        "code": FindingCode.CACHED_ELSEWHERE,
        "message": (
            f"Every name server of {zone} gives {needs.described}, but the resolvers still "
            f"keep the old answer ({said}). {when}; nothing to change, and the next check "
            "after that passes."
        ),
        "nameservers": [],
        "records": records,
    }


def _extra(hostname: str, records: list[str]) -> dict[str, Any]:
    ipv6 = any(record.startswith("AAAA") for record in records)
    who = (
        "Visitors over IPv6 and the certificate authority's validation (Let's Encrypt prefers IPv6)"
        if ipv6
        else "Some visitors and the certificate authority's validation"
    )
    return {
        "code": FindingCode.EXTRA_ADDRESS,
        "message": (
            f"{hostname} also has {_listed(records)} beside the right records. {who} are "
            f"sent there instead of the platform. Delete {'it' if len(records) == 1 else 'them'}."
        ),
        "nameservers": [],
        "records": records,
    }


def _unasked(zone: str, left_out: LeftOut, late: list[Server]) -> dict[str, Any]:
    said = []
    if left_out.names:
        said.append(
            f"{zone} lists {left_out.nameservers} name servers; we ask the first "
            f"{DOCTOR_NAMESERVERS} in alphabetical order, so {_some(list(left_out.names))} "
            f"{_verb(list(left_out.names), 'was', 'were')} not asked."
        )
    for name, count in left_out.addresses[:NAMED_AT_MOST]:
        said.append(
            f"{name} has {count + DOCTOR_ADDRESSES_PER_NAMESERVER} addresses; we ask "
            f"{DOCTOR_ADDRESSES_PER_NAMESERVER}, so {count} {'was' if count == 1 else 'were'} "
            "not asked."
        )
    if left_out.names or left_out.addresses:
        said.append(
            f"Like the resolvers, we ask at most {DOCTOR_NAMESERVERS} name servers of a zone "
            f"and {DOCTOR_ADDRESSES_PER_NAMESERVER} addresses of each, so a server among the "
            "others that does not answer, or still gives an old record, goes unreported here. "
            "If they are not meant to serve the zone, remove them at your registrar or DNS "
            "provider."
        )
    late_names = _names(late)
    if late_names:
        said.append(
            f"{_some(late_names)} could not be asked before the check's deadline; the next "
            "check asks again."
        )
    # The ones not asked at all first, then the ones asked at only some of their addresses.
    names = list(dict.fromkeys([*left_out.names, *late_names, *(n for n, _ in left_out.addresses)]))
    return {
        "code": FindingCode.NAMESERVERS_UNASKED,
        "message": " ".join(said),
        "nameservers": names[:NAMED_AT_MOST],
        "records": [],
    }


def _some(names: list[str]) -> str:
    """The first NAMED_AT_MOST names, and how many more."""
    if len(names) <= NAMED_AT_MOST:
        return _listed(names)
    return f"{', '.join(names[:NAMED_AT_MOST])} and {len(names) - NAMED_AT_MOST} more"
