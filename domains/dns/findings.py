"""The domain doctor's findings: what the answers of a zone's own name servers
(domains/dns/doctor.py; what it asked and heard: asked.py) mean for the owner (the owner's
words for each: findingsaid.py) (docs/decisions/domains.md, "The domain doctor", says what
each means and what to do).
Codes: domains.choices.FindingCode.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from domains.choices import CheckCode
from domains.dns import findingsaid as said
from domains.dns import hostnames, lookups
from domains.dns.asked import LeftOut, Needs, Result, Server, address_records

# The check codes whose cause can be an old answer a resolver still keeps.
POINTING_CODES = frozenset(
    {
        CheckCode.NO_RECORD,
        CheckCode.NXDOMAIN,
        CheckCode.WRONG_TARGET,
        CheckCode.CONFLICTING_RECORD,
    }
)


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
    finding ({code, message, said, nameservers, records}: the message in English
    and as a sentence for the reader's language, petstore/sentences.py); none when all is
    well."""
    found = []
    left_out = left_out or LeftOut()
    silent = [server for server in servers if server.silent]
    answered = [s for s in servers if not (s.silent or s.unasked or s.refused)]
    right = [server for server in answered if server.agrees]
    wrong = [server for server in answered if not server.agrees]
    if silent:
        found.append(said.unreachable(zone, silent))
    if right and wrong:
        found.append(said.disagree(zone, right, wrong, needs))
    if answered and not wrong and result.code in POINTING_CODES:
        old = _resolver_answers(hostname, needs, lookup)
        found.append(said.cached(zone, needs, result, old, now))
    beside = {record for server in answered for record in server.extra}
    extra = sorted(beside | set(_resolver_extra(hostname, needs, lookup)))
    if extra:
        found.append(said.extra_addresses(hostname, extra))
    late = [server for server in servers if server.unasked]
    if left_out.names or left_out.addresses or left_out.oversized or late:
        found.append(said.unasked(zone, left_out, late))
    if wrong and not found:
        # Nothing above explains a ✗: say what every server gives instead, so no summary
        # reads "all is well" above a row that is not.
        found.append(said.wrong(zone, wrong, needs))
    # A wildcard's `_acme-challenge` CNAME is a record of its own: a server may give the
    # name's record and lack it, so it is said apart from the findings above (after them:
    # it never stands for "nothing above explains a ✗" about the name's own record).
    undelegated = [server for server in answered if not server.delegated]
    if undelegated and needs.delegation is not None:
        found.append(said.undelegated(zone, undelegated, needs.delegation))
    elif answered and needs.delegation and result.code == CheckCode.CHALLENGE_NOT_DELEGATED:
        # Every server has it, the check did not: a resolver keeps the old answer.
        old = [lookup(needs.delegation.name, "CNAME")]
        found.append(said.cached(zone, needs.delegation, result, old, now))
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
