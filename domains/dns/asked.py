"""What the domain doctor asked and heard, as its findings (domains/dns/findings.py) and
their words (domains/dns/findingsaid.py) both read it: each server's answer, what the
platform needs of the name, what the doctor's caps left out, and the check's result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from django.utils.translation import gettext_noop

from domains.dns.lookups import NOT_ASKED
from petstore.sentences import Sentence

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
    # The zone whose NS set, or the names whose addresses, did not fit one UDP datagram:
    # the servers they name are not asked (domains/dns/doctor.py).
    oversized: tuple[str, ...] = ()


def address_records(addresses: frozenset[str] | set[str]) -> list[str]:
    """Addresses as records a person reads: `A 192.0.2.1`, `AAAA 2001:db8::1`."""
    return sorted(f"{'AAAA' if ':' in a else 'A'} {a}" for a in addresses)
