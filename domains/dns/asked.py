"""What the domain doctor asks each of the zone's servers and what it heard, as its findings
(domains/dns/findings.py) and their words (domains/dns/findingsaid.py) both read it: the
questions (`wanted`), each server's answer read from them (`heard`), what the platform needs
of the name, what the doctor's caps left out, and the check's result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from django.utils.translation import gettext_noop

from domains.dns import hostnames, lookups
from domains.dns.lookups import NOT_ASKED
from petstore.sentences import Sentence

Get = Callable[[lookups.Question], lookups.Lookup | None]
# A server whose answer to one of its questions is one of these does not answer.
SILENT = frozenset({lookups.TIMEOUT, lookups.SERVFAIL})

# A server's answer when it gave no record, or was not asked: the platform's words, stored in
# English, shown in the reader's language (`answer_shown`, `answer_said`).
NO_RECORD = gettext_noop("no record")
NO_ADDRESS = gettext_noop("no address (its name has no A or AAAA record)")
NO_ANSWER = gettext_noop("no answer")
UNRESOLVED = gettext_noop("not asked: its address did not resolve in time")
NOT_PUBLIC_ADDRESS = gettext_noop("not asked: its address is not public")
NOT_PUBLIC_NAME = gettext_noop("not asked: its name is not one the public DNS resolves")
OVERSIZED = gettext_noop("not asked: its addresses do not fit one DNS answer over UDP")
_SAID_ALONE = frozenset(
    {
        NO_RECORD,
        NO_ADDRESS,
        NO_ANSWER,
        UNRESOLVED,
        NOT_ASKED,
        NOT_PUBLIC_ADDRESS,
        NOT_PUBLIC_NAME,
        OVERSIZED,
    }
)


def no_answer(error: str) -> str:
    """The answer of a server that failed with `error` (its own words)."""
    return f"{NO_ANSWER} ({error})"


def answer_said(answer: str) -> str | Sentence:
    """A server's stored answer as a finding quotes it: the platform's own words as a
    sentence (a server's error after "no answer" as it said it), records as they are."""
    if answer in _SAID_ALONE:
        return Sentence(answer)
    if answer.startswith(f"{NO_ANSWER} ("):
        return Sentence(
            gettext_noop("no answer (%(error)s)"),
            {"error": answer.removeprefix(f"{NO_ANSWER} (").removesuffix(")")},
        )
    return answer


def answer_shown(answer: str) -> str:
    """A server's stored answer in the active language."""
    return str(answer_said(answer))


class Result(Protocol):
    """A check's result (results.CheckResult), as far as the doctor reads it."""

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
    # A wildcard's: its `_acme-challenge` CNAME names the claim's target (True when no
    # delegation is needed), and what it gives there (a record, or NO_RECORD). `agrees` is
    # about the name's own record (and TXT proof); the row agrees only with both right.
    delegated: bool = True
    delegation: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "address": self.address,
            "answer": self.answer,
            "ttl": self.ttl,
            "agrees": self.agrees and self.delegated,
        }


@dataclass(frozen=True)
class Delegation:
    """A wildcard's `_acme-challenge` name and the claim's own target its CNAME must name
    (Domain.acme_challenge_target), where the platform writes the DNS-01 proof."""

    name: str
    target: str

    def record(self, target: str) -> str:
        """A CNAME at the name as a row and a finding show it."""
        return f"{self.name} CNAME {target}."

    @property
    def described(self) -> str:
        return self.record(self.target)


@dataclass(frozen=True)
class Needs:
    """What the platform needs of the name: the CNAME target, or the apex's addresses (and
    the TXT proof, a wildcard's delegation, where they are asked for)."""

    target: str
    addresses: frozenset[str]
    is_apex: bool
    token: str | None
    # A wildcard's: its `_acme-challenge` CNAME, held to the claim's own target.
    delegation: Delegation | None = None

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
    # The zone whose NS set, or the names whose addresses, did not fit one UDP datagram:
    # the servers they name are not asked (domains/dns/doctor.py).
    oversized: tuple[str, ...] = ()


def address_records(addresses: frozenset[str] | set[str]) -> list[str]:
    """Addresses as records a person reads: `A 192.0.2.1`, `AAAA 2001:db8::1`."""
    return sorted(f"{'AAAA' if ':' in a else 'A'} {a}" for a in addresses)


def wanted(
    hostname: str, *, is_apex: bool, txt: bool, delegated: bool = False
) -> list[tuple[str, str]]:
    """What each server is asked: a subdomain's A (its answer shows the CNAME, or the
    records in its place), the apex's A and AAAA, the TXT proof when one is asked for, and a
    wildcard's `_acme-challenge` CNAME when its delegation is (`delegated`)."""
    asked = [(hostname, "A"), (hostname, "AAAA")] if is_apex else [(hostname, "A")]
    if txt:
        asked.append((hostnames.ownership_txt_name(hostname), "TXT"))
    if delegated:
        asked.append((hostnames.acme_challenge_name(hostname), "CNAME"))
    return asked


def heard(name: str, address: str, why: str, needs: Needs, hostname: str, get: Get) -> Server:
    """One server's row: (name, address, why) as domains/dns/doctor.py's `_servers` found it,
    read from the answers to its questions (`wanted`) and held to what the name `needs`."""
    if why:
        return Server(name, "", why, None, False, refused=True)
    if not address:
        found = [get((name, rdtype)) for rdtype in ("A", "AAAA")]
        if any(answer is None or answer.temporary for answer in found):
            # Its address is unknown for now, not missing: nothing to say about the server.
            return Server(name, "", UNRESOLVED, None, False, unasked=True)
        return Server(name, "", NO_ADDRESS, None, False, True)
    asked = wanted(
        hostname,
        is_apex=needs.is_apex,
        txt=needs.token is not None,
        delegated=needs.delegation is not None,
    )
    answers = {question: get((*question, address)) for question in asked}
    got = {question: answer for question, answer in answers.items() if answer is not None}
    if len(got) < len(asked) or not all(answer.asked for answer in got.values()):
        return Server(name, address, lookups.NOT_ASKED, None, False, unasked=True)
    failed = [answer for answer in got.values() if answer.status in SILENT]
    if failed:
        why = failed[0].error if failed[0].status == lookups.SERVFAIL else ""
        return Server(name, address, no_answer(why) if why else NO_ANSWER, None, False, True)
    pointing = [got[(hostname, t)] for t in ("A", "AAAA") if (hostname, t) in got]
    kept_beside = get((hostname, "CNAME", address))  # asked when the A answer hid one (beside)
    shown = [*pointing, kept_beside] if kept_beside is not None else pointing
    cname = next((value for answer in shown for value in answer.cname), "")
    addresses = {value for answer in pointing for value in answer.values}
    records = [f"CNAME {cname}.", *address_records(addresses)] if cname else []
    records = records or address_records(addresses)
    if needs.is_apex:
        agrees = not cname and addresses == needs.addresses and bool(addresses)
        extra = (
            tuple(address_records(addresses - needs.addresses))
            if addresses & needs.addresses
            else ()
        )
    else:
        agrees = cname == needs.target and not addresses
        extra = tuple(address_records(addresses)) if cname == needs.target else ()
    if needs.token is not None:
        txt = got[(hostnames.ownership_txt_name(hostname), "TXT")]
        texts = [b"".join(rdata.strings).decode("utf-8", "replace") for rdata in txt.rdatas]
        records += [f'TXT "{text}"' for text in texts]
        agrees = agrees and needs.token in texts
    delegated, delegation = True, ""
    if needs.delegation is not None:
        named = got[(needs.delegation.name, "CNAME")].values
        target = hostnames.comparable(named[0]) if named else ""
        delegation = needs.delegation.record(target) if target else NO_RECORD
        records += [delegation] if target else []
        delegated = target == needs.delegation.target
    ttls = [a.ttl for a in got.values() if a.ttl is not None and (a.values or a.cname or a.rdatas)]
    answer = ", ".join(records) if records else NO_RECORD
    return Server(
        name, address, answer, min(ttls, default=None), agrees, extra=extra,
        delegated=delegated, delegation=delegation,
    )  # fmt: skip
