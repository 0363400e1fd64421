"""What the DNS says about a custom domain, as a result a person and a program can act on.

`verify()` answers "does this host name point at the platform?" and `caa()`
answers "may the platform's CA issue for it?". Both return a CheckResult whose
`code` is a domains.choices.CheckCode; see docs/decisions/domains.md for the list.

`verify_many()` is the same check for a batch: it asks every question of every
domain at once (lookups.lookup_groups), then runs the very same `verify()` on the answers.
A subdomain's A and AAAA answers show its CNAME, so its CNAME question is asked only
when they leave something to tell apart (records of its own, no CNAME, no answer).
Each domain is decided on its own: one whose decision raises gets that exception as
its result, and the rest of the batch is decided as usual.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from django.conf import settings

from domains.choices import TEMPORARY_CHECK_CODES, CheckCode
from domains.dns import doctor, hostnames, lookups
from domains.policy import NAMES_BELOW_REGISTRABLE

# CAA property tags we understand (RFC 8659 and registered extensions).
_KNOWN_CAA_TAGS = frozenset(
    {"issue", "issuewild", "iodef", "contactemail", "contactphone", "issuemail", "issuevmc"}
)


@dataclass(frozen=True)
class CheckResult:
    code: str
    message: str
    expected: str = ""
    found: str = ""
    # The texts of the ownership TXT record, when it was asked for.
    txt: tuple[str, ...] = ()
    # What the zone's own name servers said (domains/dns/doctor.py), when they were asked.
    diagnosis: dict[str, Any] | None = field(default=None, compare=False)

    @property
    def ok(self) -> bool:
        return self.code == CheckCode.OK

    @property
    def temporary(self) -> bool:
        return self.code in TEMPORARY_CHECK_CODES


def _temporary(lookup: lookups.Lookup, expected: str) -> CheckResult:
    if lookup.status == lookups.TIMEOUT:
        return CheckResult(
            CheckCode.DNS_TIMEOUT,
            f"The DNS servers did not answer for {lookup.name} ({lookup.rdtype}) in time. "
            "This is a temporary problem on the DNS side, not your configuration; "
            "we will check again automatically.",
            expected,
        )
    return CheckResult(
        CheckCode.DNS_SERVFAIL,
        f"The DNS servers failed to answer for {lookup.name} ({lookup.rdtype}) (SERVFAIL). "
        "This is usually temporary; we will check again automatically. If it lasts, "
        "ask your DNS provider whether the zone is served correctly.",
        expected,
    )


def _describe(records: list[str]) -> str:
    return ", ".join(records)


Lookup = Callable[[str, str], lookups.Lookup]


def _unaskable(lookup: lookups.Lookup, hostname: str, expected: str = "") -> CheckResult:
    return CheckResult(
        CheckCode.UNASKABLE,
        f"{hostname} cannot be checked: the DNS name {lookup.name} is not one DNS can carry "
        f"({lookup.error}), so no record can exist there. Remove this domain and add a name "
        f"of at most {hostnames.MAX_HOSTNAME_LENGTH} characters.",
        expected,
    )


def verify(hostname: str, *, is_apex: bool, ask_txt: bool = False) -> CheckResult:
    """Does this host name point at the platform (and, with `ask_txt`, what does its
    ownership TXT record say)? Every question is asked at once, so the check as a whole
    ends within one DNS lifetime."""
    [result] = verify_many([(hostname, is_apex)], ask_txt={hostname} if ask_txt else ())
    if isinstance(result, Exception):
        raise result
    return result


def questions(hostname: str, *, is_apex: bool, ask_txt: bool = False) -> list[tuple[str, str]]:
    """Every DNS question `verify()` may ask for this domain."""
    if is_apex:
        target = hostnames.comparable(settings.PLATFORM_CNAME_TARGET)
        asked = [(target, "A"), (target, "AAAA"), (hostname, "A"), (hostname, "AAAA")]
    else:
        asked = [(hostname, "CNAME"), (hostname, "A"), (hostname, "AAAA")]
    if ask_txt:
        asked.append((hostnames.ownership_txt_name(hostname), "TXT"))
    return asked


def verify_many(
    domains: Iterable[tuple[str, bool]],
    *,
    ask_txt: Collection[str] = (),
    deadline: float | None = None,
    diagnose: Mapping[str, doctor.Ask] | None = None,
) -> list[CheckResult | Exception]:
    """`verify()` for each (hostname, is_apex), all DNS questions asked concurrently and
    answered within `deadline` seconds (default DOMAINS_DNS_LIFETIME); the ownership TXT
    record is asked for the host names in `ask_txt`, and the zone's own name servers for
    those in `diagnose` (domains/dns/doctor.py; the result's `diagnosis`). A domain whose
    decision raised has the exception as its result (the caller logs it with the domain's
    id)."""
    domains = list(domains)
    diagnose = diagnose or {}
    started = time.monotonic()
    groups = []
    for host, apex in domains:
        asked = questions(host, is_apex=apex, ask_txt=host in ask_txt)
        if apex:
            groups.append(lookups.Group(asked))
        else:
            first = [question for question in asked if question[1] != "CNAME"]
            groups.append(lookups.Group(first, partial(_cname_if_unclear, host)))
        if host in diagnose and diagnose[host].always:
            groups.append(doctor.chain(host, is_apex=apex, txt=diagnose[host].token is not None))
    answers = lookups.lookup_groups(groups, lifetime=deadline)

    def lookup(name: str, rdtype: str) -> lookups.Lookup:
        found = answers.get((name, rdtype))
        if found is None and rdtype == "CNAME":
            # Not asked: the A and AAAA answers showed it (see _cname_if_unclear).
            return _cname_shown(answers[(name, "A")])
        return answers[(name, rdtype)]

    results: list[CheckResult | Exception] = []
    for host, apex in domains:
        try:
            results.append(_verify(host, apex, lookup, host in ask_txt))
        except Exception as exc:  # noqa: BLE001 - this domain's result, not the batch's
            results.append(exc)
    if diagnose:
        lifetime = settings.DOMAINS_DNS_LIFETIME if deadline is None else deadline
        left = lifetime - (time.monotonic() - started)
        found = doctor.diagnose_all(domains, results, diagnose, answers, lookup, left=left)
        results = [
            replace(r, diagnosis=found[h]) if h in found and isinstance(r, CheckResult) else r
            for (h, _), r in zip(domains, results, strict=True)
        ]
    return results


def _cname_if_unclear(
    hostname: str, answers: dict[tuple[str, str], lookups.Lookup]
) -> list[tuple[str, str]]:
    """A subdomain's CNAME question, unless its A and AAAA answers already decide the check:
    both answered without records of the name's own and show the same CNAME of the name
    (the usual case: it points somewhere), or both answered no data without one (a name
    with a CNAME shows it in every answer); or one of them failed or cannot be asked, which
    decides it whatever the CNAME says. A name with its own A or AAAA records (instead of a
    CNAME, or beside one) or that does not exist (a CNAME to a missing name answers NXDOMAIN
    too) is asked, as before."""
    a, aaaa = answers[(hostname, "A")], answers[(hostname, "AAAA")]
    if {a.status, aaaa.status} & (lookups.TEMPORARY | {lookups.UNASKABLE}):
        return []
    clear = (
        {a.status, aaaa.status} <= {lookups.OK, lookups.NODATA}
        and not a.values
        and not aaaa.values
        and a.cname == aaaa.cname
        and bool(a.cname or (a.status == aaaa.status == lookups.NODATA))
    )
    return [] if clear else [(hostname, "CNAME")]


def _cname_shown(a: lookups.Lookup) -> lookups.Lookup:
    """The CNAME question's answer, as the A answer showed it."""
    if a.cname:
        return lookups.Lookup(
            a.name, "CNAME", lookups.OK, values=a.cname, final=a.cname, cname=a.cname
        )
    return lookups.Lookup(a.name, "CNAME", lookups.NODATA)


def _verify(hostname: str, is_apex: bool, lookup: Lookup, ask_txt: bool) -> CheckResult:
    asked = questions(hostname, is_apex=is_apex, ask_txt=ask_txt)
    answers = (lookup(name, rdtype) for name, rdtype in asked)
    unaskable = [answer for answer in answers if answer.status == lookups.UNASKABLE]
    if unaskable:
        # A name DNS cannot carry: no answer will ever come, so nothing else is decided.
        return _unaskable(unaskable[0], hostname)
    result = _verify_apex(hostname, lookup) if is_apex else _verify_subdomain(hostname, lookup)
    if not ask_txt or result.temporary:
        return result
    txt = lookup(hostnames.ownership_txt_name(hostname), "TXT")
    if txt.temporary:
        return _temporary(txt, result.expected)
    texts = tuple(b"".join(rdata.strings).decode("utf-8", "replace") for rdata in txt.rdatas)
    return replace(result, txt=texts)


def _verify_subdomain(hostname: str, lookup: Lookup) -> CheckResult:
    target = hostnames.comparable(settings.PLATFORM_CNAME_TARGET)
    expected = f"CNAME {target}"
    cname = lookup(hostname, "CNAME")
    if cname.temporary:
        return _temporary(cname, expected)
    others = [lookup(hostname, "A"), lookup(hostname, "AAAA")]
    for other in others:
        if other.temporary:
            return _temporary(other, expected)
    conflicts = [f"{o.rdtype} {value}" for o in others for value in o.values]
    if cname.values:
        found_target = hostnames.comparable(cname.values[0])
        found = f"CNAME {found_target}"
        if conflicts:
            return CheckResult(
                CheckCode.CONFLICTING_RECORD,
                f"{hostname} has a conflicting record beside the CNAME: {_describe(conflicts)}. "
                f"Delete it; a CNAME must be the only record on the name.",
                expected,
                "; ".join([found, *conflicts]),
            )
        if found_target == target:
            return CheckResult(CheckCode.OK, f"{hostname} points to {target}.", expected, found)
        return CheckResult(
            CheckCode.WRONG_TARGET,
            f"The CNAME points to {found_target}; it must be {target}.",
            expected,
            found,
        )
    if conflicts:
        return CheckResult(
            CheckCode.CONFLICTING_RECORD,
            f"{hostname} has {_describe(conflicts)} instead of the CNAME. Delete the "
            f"{' and '.join(sorted({c.split()[0] for c in conflicts}))} record and add "
            f"CNAME {target}.",
            expected,
            "; ".join(conflicts),
        )
    if cname.status == lookups.NXDOMAIN:
        return CheckResult(
            CheckCode.NXDOMAIN,
            f"{hostname} does not exist in DNS yet (NXDOMAIN). Add the CNAME record "
            f"pointing to {target}; changes can take up to 48 hours to propagate.",
            expected,
        )
    return CheckResult(
        CheckCode.NO_RECORD,
        f"{hostname} exists but has no CNAME record yet. Add CNAME {target}; changes can "
        "take up to 48 hours to propagate.",
        expected,
    )


def _verify_apex(hostname: str, lookup: Lookup) -> CheckResult:
    target = hostnames.comparable(settings.PLATFORM_CNAME_TARGET)
    wanted = [lookup(target, "A"), lookup(target, "AAAA")]
    for answer in wanted:
        if answer.temporary:
            return _temporary(answer, f"ALIAS {target}")
    expected_addresses = sorted({value for answer in wanted for value in answer.final})
    if not expected_addresses:
        return CheckResult(
            CheckCode.TARGET_UNRESOLVED,
            f"The platform target {target} did not resolve to any address. This is on our "
            "side and temporary; we will check again automatically.",
            f"ALIAS {target}",
        )
    expected = f"ALIAS {target} ({_describe(expected_addresses)})"
    seen = [lookup(hostname, "A"), lookup(hostname, "AAAA")]
    for answer in seen:
        if answer.temporary:
            return _temporary(answer, expected)
    found_records = [f"{answer.rdtype} {value}" for answer in seen for value in answer.final]
    found_addresses = {value for answer in seen for value in answer.final}
    found = _describe(found_records)
    if found_addresses == set(expected_addresses):
        return CheckResult(
            CheckCode.OK, f"{hostname} resolves to the platform ({target}).", expected, found
        )
    if not found_addresses:
        if all(answer.status == lookups.NXDOMAIN for answer in seen):
            return CheckResult(
                CheckCode.NXDOMAIN,
                f"{hostname} does not exist in DNS yet (NXDOMAIN). Add an ALIAS or ANAME "
                f"record pointing to {target}.",
                expected,
            )
        return CheckResult(
            CheckCode.NO_RECORD,
            f"{hostname} has no A or AAAA answer yet. Add an ALIAS or ANAME record pointing "
            f"to {target}; changes can take up to 48 hours to propagate.",
            expected,
        )
    extra = sorted(found_addresses - set(expected_addresses))
    if found_addresses > set(expected_addresses):
        return CheckResult(
            CheckCode.CONFLICTING_RECORD,
            f"{hostname} also answers with {_describe(extra)}, which is not the platform. "
            "Delete those A/AAAA records and keep only the ALIAS/ANAME record.",
            expected,
            found,
        )
    return CheckResult(
        CheckCode.WRONG_TARGET,
        f"{hostname} resolves to {found}, not to the platform. Replace those records with "
        f"an ALIAS or ANAME record pointing to {target}.",
        expected,
        found,
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


def caa(hostname: str, identity: str) -> CheckResult:
    """May the CA whose CAA identity is `identity` (the issuing authority's, e.g.
    letsencrypt.org) issue for `hostname`? The relevant CAA set is the nearest one."""
    ca = hostnames.comparable(identity)
    expected = f'CAA 0 issue "{ca}" (or no CAA records)'
    climb = _climb(hostname)
    # Asked at once: the climb as a whole ends within one DNS lifetime.
    answers = lookups.lookup_many((name, "CAA") for name in climb)
    for name in climb:
        lookup = answers[(name, "CAA")]
        if lookup.status == lookups.UNASKABLE:
            return _unaskable(lookup, hostname, expected)
        if lookup.temporary:
            # RFC 8659: a failed CAA lookup must not be read as permission.
            return _temporary(lookup, expected)
        if not lookup.rdatas:
            continue
        found = "; ".join(f"{name} CAA {text}" for text in lookup.final)
        for rdata in lookup.rdatas:
            tag = rdata.tag.decode("ascii", "replace").lower()
            if rdata.flags & 128 and tag not in _KNOWN_CAA_TAGS:
                return CheckResult(
                    CheckCode.CAA_BLOCKED,
                    f"The CAA record on {name} ({rdata.to_text()}) has an unknown critical "
                    f'property, so no CA may issue. Remove it or add CAA 0 issue "{ca}".',
                    expected,
                    found,
                )
        issuers = [
            rdata
            for rdata in lookup.rdatas
            if rdata.tag.decode("ascii", "replace").lower() == "issue"
        ]
        if not issuers:
            return CheckResult(
                CheckCode.OK, f"The CAA records on {name} set no issue rule.", expected, found
            )
        for rdata in issuers:
            allowed = rdata.value.decode("ascii", "replace").split(";")[0].strip().lower()
            if allowed == ca:
                return CheckResult(
                    CheckCode.OK, f"The CAA records on {name} allow {ca}.", expected, found
                )
        blocking = ", ".join(f"{name} CAA {rdata.to_text()}" for rdata in issuers)
        return CheckResult(
            CheckCode.CAA_BLOCKED,
            f"The CAA record {blocking} does not allow the platform's certificate authority "
            f'{ca}. Add the record {name}. CAA 0 issue "{ca}" (or remove the CAA records).',
            expected,
            found,
        )
    return CheckResult(
        CheckCode.OK, "No CAA records: any certificate authority may issue.", expected
    )
