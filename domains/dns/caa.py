"""May the platform's CA issue for a custom domain? The CAA records of the name and its
parents (RFC 8659), as a CheckResult (domains/dns/diagnosis.py) whose `code` is a
domains.choices.CheckCode. A wildcard's are those of the name it stands under, where its
`issuewild` records, if the set has any, decide instead of `issue` (RFC 8659 §4.3), as CAs
read them."""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.translation import gettext_noop
from dns.rdtypes.ANY.CAA import CAA

from domains.choices import CheckCode
from domains.dns import hostnames, lookups
from domains.dns.results import CheckResult, temporary, unaskable
from domains.policy import NAMES_BELOW_REGISTRABLE
from petstore.sentences import Sentence

# CAA property tags we understand (RFC 8659 and registered extensions).
_KNOWN_CAA_TAGS = frozenset(
    {"issue", "issuewild", "iodef", "contactemail", "contactphone", "issuemail", "issuevmc"}
)

# Names below the registrable domain the CAA climb asks at most (the nearest ones; why:
# domains.policy). The registrable domain and its parents, where owners actually put CAA
# records, are always asked.
MAX_CAA_NAMES_BELOW_REGISTRABLE = NAMES_BELOW_REGISTRABLE


def _climb(hostname: str) -> list[str]:
    """The name and its parents, nearest first, down to (not including) the root (RFC 8659);
    of the names below the registrable domain only the nearest few."""
    name = hostnames.comparable(hostname)
    labels = name.split(".")
    names = [".".join(labels[i:]) for i in range(len(labels))]
    registrable = hostnames.registrable_domain(name)
    below = names.index(registrable) if registrable in names else len(names)
    return names[: min(below, MAX_CAA_NAMES_BELOW_REGISTRABLE)] + names[below:]


def _tag(rdata: CAA) -> str:
    return str(rdata.tag.decode("ascii", "replace").lower())


def _rule(rdatas: Sequence[CAA], *, wildcard: bool) -> tuple[str, list[CAA]]:
    """The property that decides for the name, and its records: `issuewild` for a wildcard
    whose set has any, else `issue`."""
    wild = [rdata for rdata in rdatas if _tag(rdata) == "issuewild"] if wildcard else []
    if wild:
        return "issuewild", wild
    return "issue", [rdata for rdata in rdatas if _tag(rdata) == "issue"]


def caa(hostname: str, identities: Sequence[str]) -> tuple[CheckResult, frozenset[str]]:
    """May the CAs whose CAA identities are `identities` (the issuing authorities', e.g.
    letsencrypt.org; the one an owner is told to allow first) issue for `hostname`? The
    answer, and which of `identities` the relevant CAA set (the nearest one) allows: all of
    them when it sets no rule, none when it blocks or could not be read."""
    ca = hostnames.comparable(identities[0])
    everyone = frozenset(identities)
    expected = f'CAA 0 issue "{ca}" (or no CAA records)'
    asked_for = hostnames.comparable(hostname)
    wildcard = hostnames.is_wildcard(asked_for)
    climb = _climb(hostnames.wildcard_base(asked_for))
    # Asked at once: the climb as a whole ends within one DNS lifetime.
    answers = lookups.lookup_many((name, "CAA") for name in climb)
    for name in climb:
        lookup = answers[(name, "CAA")]
        if lookup.status == lookups.UNASKABLE:
            return unaskable(lookup, hostname, expected), frozenset()
        if lookup.temporary:
            # RFC 8659: a failed CAA lookup must not be read as permission.
            return temporary(lookup, expected), frozenset()
        if not lookup.rdatas:
            continue
        found = "; ".join(f"{name} CAA {text}" for text in lookup.final)
        for rdata in lookup.rdatas:
            if rdata.flags & 128 and _tag(rdata) not in _KNOWN_CAA_TAGS:
                said = Sentence(
                    gettext_noop(
                        "The CAA record on %(name)s (%(record)s) has an unknown critical "
                        'property, so no CA may issue. Remove it or add CAA 0 issue "%(ca)s".'
                    ),
                    {"name": name, "record": rdata.to_text(), "ca": ca},
                )
                return CheckResult(CheckCode.CAA_BLOCKED, said, expected, found), frozenset()
        rule, issuers = _rule(lookup.rdatas, wildcard=wildcard)
        if not issuers:
            said = Sentence(
                gettext_noop("The CAA records on %(name)s set no issue rule."), {"name": name}
            )
            return CheckResult(CheckCode.OK, said, expected, found), everyone
        named = {
            rdata.value.decode("ascii", "replace").split(";")[0].strip().lower()
            for rdata in issuers
        }
        allowed = [each for each in identities if hostnames.comparable(each) in named]
        if allowed:
            said = Sentence(
                gettext_noop("The CAA records on %(name)s allow %(ca)s."),
                {"name": name, "ca": hostnames.comparable(allowed[0])},
            )
            return CheckResult(CheckCode.OK, said, expected, found), frozenset(allowed)
        blocking = ", ".join(f"{name} CAA {rdata.to_text()}" for rdata in issuers)
        return CheckResult(
            CheckCode.CAA_BLOCKED,
            Sentence(
                gettext_noop(
                    "The CAA record %(blocking)s does not allow the platform's certificate "
                    'authority %(ca)s. Add the record %(name)s. CAA 0 %(rule)s "%(ca)s" (or '
                    "remove the CAA records)."
                ),
                {"blocking": blocking, "ca": ca, "name": name, "rule": rule},
            ),
            f'CAA 0 {rule} "{ca}" (or no CAA records)',
            found,
        ), frozenset()
    said = Sentence(gettext_noop("No CAA records: any certificate authority may issue."))
    return CheckResult(CheckCode.OK, said, expected), everyone
