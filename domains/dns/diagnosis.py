"""What the DNS says about a custom domain, as a result a person and a program can act on.

`verify()` answers "does this host name point at the platform?" (and domains/dns/caa.py
"may the platform's CA issue for it?"). Both return a CheckResult whose `code` is a
domains.choices.CheckCode; see docs/decisions/domains.md for the list.

`verify_many()` is the same check for a batch: it asks every question of every
domain at once (lookups.lookup_groups), then runs the very same `verify()` on the answers.
A subdomain's A and AAAA answers show its CNAME, so its CNAME question is asked only
when they leave something to tell apart (records of its own, no CNAME, no answer).
Each domain is decided on its own: one whose decision raises gets that exception as
its result, and the rest of the batch is decided as usual.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import replace
from functools import partial

from django.conf import settings
from django.utils.translation import gettext_noop

from domains.choices import CheckCode
from domains.dns import doctor, hostnames, lookups
from domains.dns.results import CheckResult, temporary, unaskable
from petstore.sentences import Sentence

# How a decision reads an answer: the batch's answers, looked up by (name, type).
Lookup = Callable[[str, str], lookups.Lookup]


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
    diagnose: Sequence[doctor.Ask | None] | None = None,
    delegated: Sequence[str | None] | None = None,
) -> list[CheckResult | Exception]:
    """`verify()` for each (hostname, is_apex), all DNS questions asked concurrently and
    answered within `deadline` seconds (default DOMAINS_DNS_LIFETIME); the ownership TXT
    record is asked for the host names in `ask_txt`, and the zone's own name servers for
    each domain whose `diagnose` entry is an Ask (domains/dns/doctor.py; the result's
    `diagnosis`). A domain whose decision raised has the exception as its result (the caller
    logs it with the domain's id). `delegated`: for each domain in turn, a wildcard's
    `_acme-challenge` CNAME target (Domain.acme_challenge_target; None for any other), asked
    for too: it passes only with that CNAME in place, and the doctor holds each server to it.
    `diagnose` and `delegated` are given per claim, not per name: two projects' claims of one
    wildcard in one batch are each held to their own target and their own TXT proof."""
    domains = list(domains)
    asks = list(diagnose) if diagnose is not None else [None] * len(domains)
    targets = list(delegated) if delegated is not None else [None] * len(domains)
    started = time.monotonic()
    groups = []
    for (host, apex), target, ask in zip(domains, targets, asks, strict=True):
        asked = questions(host, is_apex=apex, ask_txt=host in ask_txt)
        if apex:
            groups.append(lookups.Group(asked))
        else:
            first = [question for question in asked if question[1] != "CNAME"]
            groups.append(lookups.Group(first, partial(_cname_if_unclear, host)))
        if target is not None:
            groups.append(lookups.Group([(hostnames.acme_challenge_name(host), "CNAME")]))
        if ask is not None and ask.always:
            txt, delegation = ask.token is not None, target is not None
            groups.append(doctor.chain(host, is_apex=apex, txt=txt, delegated=delegation))
    answers = lookups.lookup_groups(groups, lifetime=deadline)

    def lookup(name: str, rdtype: str) -> lookups.Lookup:
        found = answers.get((name, rdtype))
        if found is None and rdtype == "CNAME":
            # Not asked: the A and AAAA answers showed it (see _cname_if_unclear).
            return _cname_shown(answers[(name, "A")])
        return answers[(name, rdtype)]

    results: list[CheckResult | Exception] = []
    for (host, apex), target in zip(domains, targets, strict=True):
        try:
            result = _verify(host, apex, lookup, host in ask_txt)
            if target is not None and result.ok:
                result = _verify_delegation(host, target, lookup, result)
            results.append(result)
        except Exception as exc:  # noqa: BLE001 - this domain's result, not the batch's
            results.append(exc)
    if any(ask is not None for ask in asks):
        lifetime = settings.DOMAINS_DNS_LIFETIME if deadline is None else deadline
        left = lifetime - (time.monotonic() - started)
        found = doctor.diagnose_all(domains, results, asks, targets, answers, lookup, left=left)
        results = [
            replace(r, diagnosis=d) if d is not None and isinstance(r, CheckResult) else r
            for r, d in zip(results, found, strict=True)
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
    refused = [answer for answer in answers if answer.status == lookups.UNASKABLE]
    if refused:
        # A name DNS cannot carry: no answer will ever come, so nothing else is decided.
        return unaskable(refused[0], hostname)
    result = _verify_apex(hostname, lookup) if is_apex else _verify_subdomain(hostname, lookup)
    if not ask_txt or result.temporary:
        return result
    txt = lookup(hostnames.ownership_txt_name(hostname), "TXT")
    if txt.temporary:
        return temporary(txt, result.expected)
    texts = tuple(b"".join(rdata.strings).decode("utf-8", "replace") for rdata in txt.rdatas)
    return replace(result, txt=texts)


def _verify_delegation(
    hostname: str, target: str, lookup: Lookup, result: CheckResult
) -> CheckResult:
    """A wildcard whose names point here passes once its `_acme-challenge` name is a CNAME
    to `target`, where the platform writes the DNS-01 record its certificate needs."""
    name = hostnames.acme_challenge_name(hostname)
    expected = f"CNAME {target}"
    cname = lookup(name, "CNAME")
    if cname.temporary:
        return temporary(cname, expected)
    found = hostnames.comparable(cname.values[0]) if cname.values else ""
    if found == target:
        return result
    return CheckResult(
        CheckCode.CHALLENGE_NOT_DELEGATED,
        Sentence(
            gettext_noop(
                "%(name)s must be a CNAME to %(target)s, so that the platform can prove the "
                "wildcard to the certificate authority."
            ),
            {"name": name, "target": target},
        ),
        expected,
        f"CNAME {found}" if found else "",
        txt=result.txt,
    )


def _verify_subdomain(hostname: str, lookup: Lookup) -> CheckResult:
    target = hostnames.comparable(settings.PLATFORM_CNAME_TARGET)
    expected = f"CNAME {target}"
    cname = lookup(hostname, "CNAME")
    if cname.temporary:
        return temporary(cname, expected)
    others = [lookup(hostname, "A"), lookup(hostname, "AAAA")]
    for other in others:
        if other.temporary:
            return temporary(other, expected)
    conflicts = [f"{o.rdtype} {value}" for o in others for value in o.values]
    if cname.values:
        found_target = hostnames.comparable(cname.values[0])
        found = f"CNAME {found_target}"
        if conflicts:
            return CheckResult(
                CheckCode.CONFLICTING_RECORD,
                Sentence(
                    gettext_noop(
                        "%(hostname)s has a conflicting record beside the CNAME: %(records)s. "
                        "Delete it; a CNAME must be the only record on the name."
                    ),
                    {"hostname": hostname, "records": ", ".join(conflicts)},
                ),
                expected,
                "; ".join([found, *conflicts]),
            )
        if found_target == target:
            said = Sentence(
                gettext_noop("%(hostname)s points to %(target)s."),
                {"hostname": hostname, "target": target},
            )
            return CheckResult(CheckCode.OK, said, expected, found)
        return CheckResult(
            CheckCode.WRONG_TARGET,
            Sentence(
                gettext_noop("The CNAME points to %(found)s; it must be %(target)s."),
                {"found": found_target, "target": target},
            ),
            expected,
            found,
        )
    if conflicts:
        return CheckResult(
            CheckCode.CONFLICTING_RECORD,
            Sentence(
                gettext_noop(
                    "%(hostname)s has %(records)s instead of the CNAME. Delete the %(types)s "
                    "record and add CNAME %(target)s."
                ),
                {
                    "hostname": hostname,
                    "records": ", ".join(conflicts),
                    "types": "/".join(sorted({c.split()[0] for c in conflicts})),
                    "target": target,
                },
            ),
            expected,
            "; ".join(conflicts),
        )
    if cname.status == lookups.NXDOMAIN:
        return CheckResult(
            CheckCode.NXDOMAIN,
            Sentence(
                gettext_noop(
                    "%(hostname)s does not exist in DNS yet (NXDOMAIN). Add the CNAME record "
                    "pointing to %(target)s; changes can take up to 48 hours to propagate."
                ),
                {"hostname": hostname, "target": target},
            ),
            expected,
        )
    return CheckResult(
        CheckCode.NO_RECORD,
        Sentence(
            gettext_noop(
                "%(hostname)s exists but has no CNAME record yet. Add CNAME %(target)s; "
                "changes can take up to 48 hours to propagate."
            ),
            {"hostname": hostname, "target": target},
        ),
        expected,
    )


def _verify_apex(hostname: str, lookup: Lookup) -> CheckResult:
    target = hostnames.comparable(settings.PLATFORM_CNAME_TARGET)
    wanted = [lookup(target, "A"), lookup(target, "AAAA")]
    for answer in wanted:
        if answer.temporary:
            return temporary(answer, f"ALIAS {target}")
    expected_addresses = sorted({value for answer in wanted for value in answer.final})
    if not expected_addresses:
        return CheckResult(
            CheckCode.TARGET_UNRESOLVED,
            Sentence(
                gettext_noop(
                    "The platform target %(target)s did not resolve to any address. This is "
                    "on our side and temporary; we will check again automatically."
                ),
                {"target": target},
            ),
            f"ALIAS {target}",
        )
    expected = f"ALIAS {target} ({', '.join(expected_addresses)})"
    seen = [lookup(hostname, "A"), lookup(hostname, "AAAA")]
    for answer in seen:
        if answer.temporary:
            return temporary(answer, expected)
    found_records = [f"{answer.rdtype} {value}" for answer in seen for value in answer.final]
    found_addresses = {value for answer in seen for value in answer.final}
    found = ", ".join(found_records)
    if found_addresses == set(expected_addresses):
        said = Sentence(
            gettext_noop("%(hostname)s resolves to the platform (%(target)s)."),
            {"hostname": hostname, "target": target},
        )
        return CheckResult(CheckCode.OK, said, expected, found)
    if not found_addresses:
        if all(answer.status == lookups.NXDOMAIN for answer in seen):
            return CheckResult(
                CheckCode.NXDOMAIN,
                Sentence(
                    gettext_noop(
                        "%(hostname)s does not exist in DNS yet (NXDOMAIN). Add an ALIAS or "
                        "ANAME record pointing to %(target)s."
                    ),
                    {"hostname": hostname, "target": target},
                ),
                expected,
            )
        return CheckResult(
            CheckCode.NO_RECORD,
            Sentence(
                gettext_noop(
                    "%(hostname)s has no A or AAAA answer yet. Add an ALIAS or ANAME record "
                    "pointing to %(target)s; changes can take up to 48 hours to propagate."
                ),
                {"hostname": hostname, "target": target},
            ),
            expected,
        )
    extra = sorted(found_addresses - set(expected_addresses))
    if found_addresses > set(expected_addresses):
        return CheckResult(
            CheckCode.CONFLICTING_RECORD,
            Sentence(
                gettext_noop(
                    "%(hostname)s also answers with %(extra)s, which is not the platform. "
                    "Delete those A/AAAA records and keep only the ALIAS/ANAME record."
                ),
                {"hostname": hostname, "extra": ", ".join(extra)},
            ),
            expected,
            found,
        )
    return CheckResult(
        CheckCode.WRONG_TARGET,
        Sentence(
            gettext_noop(
                "%(hostname)s resolves to %(found)s, not to the platform. Replace those "
                "records with an ALIAS or ANAME record pointing to %(target)s."
            ),
            {"hostname": hostname, "found": found, "target": target},
        ),
        expected,
        found,
    )
