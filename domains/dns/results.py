"""A check's result (`CheckResult`), as domains/dns/diagnosis.py and caa.py decide it: a
`code` of domains.choices.CheckCode a program acts on, the sentence a person reads, and what
was expected and found; and the results of a question that could not be answered or asked."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext_noop

from domains.choices import TEMPORARY_CHECK_CODES, CheckCode
from domains.dns import hostnames, lookups
from petstore.sentences import Sentence


@dataclass(frozen=True)
class CheckResult:
    code: str
    # What the result means for the owner, read in their language (petstore/sentences.py).
    said: Sentence
    expected: str = ""
    found: str = ""
    # The texts of the ownership TXT record, when it was asked for.
    txt: tuple[str, ...] = ()
    # What the zone's own name servers said (domains/dns/doctor.py), when they were asked.
    diagnosis: dict[str, Any] | None = field(default=None, compare=False)

    @property
    def message(self) -> str:
        """`said` in English: what is stored as text, and what the API and commands say."""
        return self.said.english()

    @property
    def ok(self) -> bool:
        return self.code == CheckCode.OK

    @property
    def temporary(self) -> bool:
        return self.code in TEMPORARY_CHECK_CODES


def temporary(lookup: lookups.Lookup, expected: str) -> CheckResult:
    if lookup.status == lookups.TIMEOUT:
        return CheckResult(
            CheckCode.DNS_TIMEOUT,
            Sentence(
                gettext_noop(
                    "The DNS servers did not answer for %(name)s (%(type)s) in time. This is "
                    "a temporary problem on the DNS side, not your configuration; we will "
                    "check again automatically."
                ),
                {"name": lookup.name, "type": lookup.rdtype},
            ),
            expected,
        )
    return CheckResult(
        CheckCode.DNS_SERVFAIL,
        Sentence(
            gettext_noop(
                "The DNS servers failed to answer for %(name)s (%(type)s) (SERVFAIL). This is "
                "usually temporary; we will check again automatically. If it lasts, ask your "
                "DNS provider whether the zone is served correctly."
            ),
            {"name": lookup.name, "type": lookup.rdtype},
        ),
        expected,
    )


def unaskable(lookup: lookups.Lookup, hostname: str, expected: str = "") -> CheckResult:
    return CheckResult(
        CheckCode.UNASKABLE,
        Sentence(
            gettext_noop(
                "%(hostname)s cannot be checked: the DNS name %(name)s is not one DNS can "
                "carry (%(error)s), so no record can exist there. Remove this domain and add "
                "a name of at most %(length)d characters."
            ),
            {
                "hostname": hostname,
                "name": lookup.name,
                "error": lookup.error,
                "length": hostnames.MAX_HOSTNAME_LENGTH,
            },
        ),
        expected,
    )
