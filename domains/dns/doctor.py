"""The domain doctor: what each of the zone's own name servers says about a custom domain,
and what that means for its owner, before they have to ask.

A check asks the platform's resolvers, which answer what one of the zone's servers said,
maybe a while ago. The doctor finds the zone's authoritative name servers (the NS records
of the closest enclosing zone, their addresses from A and AAAA) and asks each address
directly (lookups' direct questions) for what the platform needs of the name: the A
answer of a subdomain, which shows its CNAME; the apex's A and AAAA; the TXT proof when
one is asked for; and a wildcard's `_acme-challenge` CNAME, held to the claim's own target
(`delegated`, per claim: two projects' claims of one wildcard each to their own). `chain()`
is those questions as one lookups.Group, asked with the check's own, in parallel, within the
check's lifetime; `diagnose()` reads the answers into the stored diagnosis (each server's
row: asked.py's `heard`).

The zone's NS records and its servers' addresses are the tenant's to write, so the doctor
asks no more of them than domains.policy allows (DOCTOR_NAMESERVERS names,
DOCTOR_ADDRESSES_PER_NAMESERVER addresses of each, DOCTOR_IN_FLIGHT questions at once),
whatever the zone holds, and says what it left out (finding nameservers_unasked). Its
questions of the resolver and of the servers are asked over UDP only (lookups.Group.whole
false): a zone whose NS set, or a server whose addresses, do not fit one datagram is not
asked further (`oversized` in that finding), so no zone makes the platform fetch and read
hundreds of records over TCP to use ten:

    {"checked_at", "nameservers": [{name, address, answer, ttl, agrees}],
     "findings": [{code, message, nameservers, records}]}

What the answers mean, and the owner's words for it, is domains/dns/findings.py (codes:
domains.choices.FindingCode; docs/decisions/domains.md, "The domain doctor", says what
each means for the owner and what to do).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone

from domains import outbound
from domains.dns import findings, hostnames, lookups
from domains.dns.asked import (
    NOT_PUBLIC_ADDRESS,
    NOT_PUBLIC_NAME,
    OVERSIZED,
    Delegation,
    Get,
    LeftOut,
    Needs,
    Result,
    heard,
    wanted,
)
from domains.policy import (
    DOCTOR_ADDRESSES_PER_NAMESERVER,
    DOCTOR_IN_FLIGHT,
    DOCTOR_NAMESERVERS,
    NAMES_BELOW_REGISTRABLE,
)

log = logging.getLogger(__name__)


def zone_candidates(hostname: str) -> list[str]:
    """The names that may be the closest enclosing zone: the name and its parents down to
    its registrable domain (a zone is delegated no higher), nearest first; of the names
    below the registrable domain only the nearest NAMES_BELOW_REGISTRABLE."""
    name = hostnames.comparable(hostname)
    registrable = hostnames.registrable_domain(name)
    labels = name.split(".")
    names = [".".join(labels[i:]) for i in range(len(labels))]
    if registrable not in names:
        return [name]
    return names[: min(names.index(registrable), NAMES_BELOW_REGISTRABLE)] + [registrable]


def _zone(hostname: str, get: Get) -> tuple[str, list[str], bool]:
    """The closest enclosing zone with NS records, its name servers' names, sorted, and
    whether its NS set did not fit one datagram (then no name: none is asked)."""
    for name in zone_candidates(hostname):
        found = get((name, "NS"))
        if found is not None and found.truncated:
            return name, [], True
        if found is not None and found.values:
            return name, sorted({hostnames.comparable(value) for value in found.values}), False
    return "", [], False


# Why a server is not asked although it has an address: the one place the platform's
# address policy (domains/outbound.py) and its rule for public names meet the doctor. The
# refused address itself is never shown: whatever answers there is none of the tenant's
# business, and the address may come from a private view of the platform's resolver.


def _asked_names(hostname: str, get: Get) -> list[str]:
    """The names of the zone's servers the doctor asks: the first DOCTOR_NAMESERVERS."""
    return _zone(hostname, get)[1][:DOCTOR_NAMESERVERS]


@dataclass(frozen=True)
class Servers:
    """What `_servers` found: (name, address, "") of each server the doctor asks; (name, "",
    "") for one without address; (name, "", why) for one not asked by the platform's rule (a
    name the public DNS cannot resolve, an address the address policy refuses, more addresses
    than one datagram holds: `oversized`), never given to lookups; and how many allowed
    addresses of each name were left out (DOCTOR_ADDRESSES_PER_NAMESERVER)."""

    asked: list[tuple[str, str, str]]
    left_out: dict[str, int]
    oversized: list[str]


def _servers(names: list[str], get: Get) -> Servers:
    """Which of the zone's servers `names` the doctor asks, at which addresses (Servers)."""
    platform = outbound.platform_addresses(
        lambda own: [v for t in ("A", "AAAA") if (f := get((own, t))) for v in f.final]
    )
    servers: list[tuple[str, str, str]] = []
    left_out: dict[str, int] = {}
    oversized: list[str] = []
    for name in names:
        if not hostnames.is_public_name(name):
            servers.append((name, "", NOT_PUBLIC_NAME))
            continue
        found = [answer for t in ("A", "AAAA") if (answer := get((name, t))) is not None]
        if any(answer.truncated for answer in found):
            servers.append((name, "", OVERSIZED))
            oversized.append(name)
            continue
        addresses = [address for answer in found for address in answer.values]
        allowed = [a for a in addresses if not outbound.refusal(a, platform=platform)]
        refused = [(name, "", NOT_PUBLIC_ADDRESS)] if len(allowed) < len(addresses) else []
        chosen = _chosen(allowed)
        servers += [(name, address, "") for address in chosen] + refused or [(name, "", "")]
        if len(allowed) > len(chosen):
            left_out[name] = len(allowed) - len(chosen)
    return Servers(servers, left_out, oversized)


def _chosen(addresses: list[str]) -> list[str]:
    """The first DOCTOR_ADDRESSES_PER_NAMESERVER addresses, one of each family first (the
    IPv4 and IPv6 a dual-stack resolver chooses between), each family in sorted order."""
    families = [
        sorted(a for a in addresses if ":" not in a),
        sorted(a for a in addresses if ":" in a),
    ]
    interleaved = [a for pair in itertools.zip_longest(*families) for a in pair if a is not None]
    return interleaved[:DOCTOR_ADDRESSES_PER_NAMESERVER]


def _gathered(names: list[str]) -> list[lookups.Question]:
    """The questions whose answers `_servers` reads: the addresses of the zone's servers
    whose names the public DNS resolves, and the platform's own addresses."""
    public = [name for name in names if hostnames.is_public_name(name)]
    return [(n, t) for n in [*public, *outbound.platform_names()] for t in ("A", "AAAA")]


def chain(hostname: str, *, is_apex: bool, txt: bool, delegated: bool = False) -> lookups.Group:
    """The doctor's questions as one group: the zone's NS, then their addresses, then each
    address directly (`wanted`: with the TXT proof, and a wildcard's `_acme-challenge` CNAME
    when `delegated`); every step within what is left of the group's lifetime."""
    asked: dict[lookups.Question, lookups.Lookup] = {}

    def addresses(answers: dict[lookups.Question, lookups.Lookup]) -> lookups.Group:
        asked.update(answers)
        names = _asked_names(hostname, asked.get)
        return lookups.Group(_gathered(names), then=directly, whole=False)

    def directly(answers: dict[lookups.Question, lookups.Lookup]) -> lookups.Group:
        asked.update(answers)
        questions: list[lookups.Question] = [
            (name, rdtype, address)
            for _, address, _ in _servers(_asked_names(hostname, asked.get), asked.get).asked
            if address
            for name, rdtype in wanted(hostname, is_apex=is_apex, txt=txt, delegated=delegated)
        ]
        # Once each (two servers' names may share an address): `beside` reads them by question.
        unique = list(dict.fromkeys(questions))
        return lookups.Group(unique, then=None if is_apex else beside, whole=False)

    def beside(answers: dict[lookups.Question, lookups.Lookup]) -> list[lookups.Question]:
        # A server that keeps an A record beside a subdomain's CNAME answers the A question
        # with the A alone: its CNAME is asked too, so its row shows its whole answer, as
        # the check finds it. (A server that shows a CNAME, or no record, is asked no more.)
        return [
            (hostname, "CNAME", question[2])
            for question, answer in answers.items()
            if question[:2] == (hostname, "A") and answer.values and not answer.cname
        ]

    def own_zone(answers: dict[lookups.Question, lookups.Lookup]) -> lookups.Group:
        asked.update(answers)
        if asked[(hostname, "A")].cname:
            return addresses(answers)  # a CNAME is never a zone's apex: a parent is the zone
        return lookups.Group([(hostname, "NS")], then=addresses, whole=False)

    candidates = zone_candidates(hostname)
    parents: list[lookups.Question] = [(name, "NS") for name in candidates[1:]]
    if not parents:
        return lookups.Group(
            [(hostname, "NS")], then=addresses, in_flight=DOCTOR_IN_FLIGHT, whole=False
        )
    # The name's own A question is the check's (asked once for both, whole): when it shows a
    # CNAME, the name is no zone of its own, and its NS question is not asked (the usual case).
    return lookups.Group(
        [(hostname, "A"), *parents], then=own_zone, in_flight=DOCTOR_IN_FLIGHT, whole=False
    )


@dataclass(frozen=True)
class Ask:
    """Whether a domain's check asks its zone's name servers: `always` (not live yet: with
    the check's own questions), or only when the check fails (a live domain: after them,
    within what is left of the deadline); `token`, the TXT proof its servers should have."""

    always: bool
    token: str | None = None


# Below this many seconds left of a check's deadline, a failing live domain's servers are
# not asked: no answer would come in time.
LEAST_TIME = 0.05


def diagnose_all(
    domains: list[tuple[str, bool]],
    results: Sequence[Result | Exception],
    asks: Sequence[Ask | None],
    delegated: Sequence[str | None],
    answers: dict[lookups.Question, lookups.Lookup],
    lookup: Callable[[str, str], lookups.Lookup],
    *,
    left: float,
) -> list[dict[str, Any] | None]:
    """The diagnosis of each claim of a checked batch, in its order (`asks` and `delegated`,
    a wildcard's target, are per claim too: two claims of one name each get their own), or
    None: asked with the check (`Ask.always`), or for a live one whose check failed, whose
    servers are asked now, in `left` seconds at most. A claim without an Ask, or whose check
    raised, gets none."""
    claims = zip(domains, results, asks, delegated, strict=True)
    diagnosed = [
        (n, host, apex, result, ask, target)
        for n, ((host, apex), result, ask, target) in enumerate(claims)
        if ask is not None and not isinstance(result, Exception) and (ask.always or not result.ok)
    ]
    failing = [
        chain(host, is_apex=apex, txt=ask.token is not None, delegated=target is not None)
        for _, host, apex, _, ask, target in diagnosed
        if not ask.always
    ]
    if failing and left > LEAST_TIME:
        # The zones and servers the check's own round asked are not asked again.
        answers = lookups.lookup_groups(failing, lifetime=left, known=answers)
    now = timezone.now()
    found: list[dict[str, Any] | None] = [None] * len(results)
    for n, host, apex, result, ask, target in diagnosed:
        try:
            found[n] = diagnose(
                host, is_apex=apex, result=result, get=answers.get, lookup=lookup,
                token=ask.token, now=now, delegated=target,
            )  # fmt: skip
        except Exception:  # noqa: BLE001 - this domain's diagnosis, never its check or the batch's
            log.exception("diagnosing %s failed; its check is recorded without one", host)
    return found


def diagnose(
    hostname: str,
    *,
    is_apex: bool,
    result: Result,
    get: Get,
    lookup: Callable[[str, str], lookups.Lookup],
    token: str | None,
    now: datetime,
    delegated: str | None = None,
) -> dict[str, Any]:
    """The stored diagnosis of one check: each server's answer, and the findings;
    `delegated`, a wildcard's claim's target its `_acme-challenge` CNAME must name."""
    target = hostnames.comparable(settings.PLATFORM_CNAME_TARGET)
    addresses: frozenset[str] = frozenset()
    if is_apex:
        addresses = frozenset(v for t in ("A", "AAAA") for v in lookup(target, t).final)
    challenge = hostnames.acme_challenge_name(hostname)
    delegation = Delegation(challenge, delegated) if delegated is not None else None
    needs = Needs(target, addresses, is_apex, token, delegation)
    zone, names, oversized = _zone(hostname, get)
    found = _servers(names[:DOCTOR_NAMESERVERS], get)
    servers = [
        heard(name, address, why, needs, hostname, get) for name, address, why in found.asked
    ]
    left = LeftOut(
        nameservers=len(names),
        names=tuple(names[DOCTOR_NAMESERVERS:]),
        addresses=tuple(sorted(found.left_out.items())),
        oversized=((zone,) if oversized else ()) + tuple(found.oversized),
    )
    return {
        "checked_at": now.isoformat(),
        "nameservers": [server.as_dict() for server in servers],
        "findings": findings.findings(hostname, zone, servers, needs, result, lookup, now, left),
    }
