"""The domain doctor's findings in the owner's words, one function a finding
(domains/dns/findings.py decides which; docs/decisions/domains.md, "The domain doctor", says
what each means and what to do). Each is stored in English and as a sentence to read in the
reader's language (petstore/sentences.py). Codes: domains.choices.FindingCode.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext_noop

from domains.choices import FindingCode
from domains.dns.asked import answer_said
from domains.policy import DOCTOR_ADDRESSES_PER_NAMESERVER, DOCTOR_NAMESERVERS
from petstore.sentences import Sentence, Value, joined

if TYPE_CHECKING:
    from domains.dns import lookups
    from domains.dns.asked import Delegation, LeftOut, Needs, Result, Server

# Names a finding lists at most, the rest counted: a zone may list any number.
NAMED_AT_MOST = 5


def _finding(
    code: str, said: Sentence, nameservers: list[str], records: list[str]
) -> dict[str, Any]:
    return {
        "code": code,
        "message": said.english(),
        "said": said.stored(),
        "nameservers": nameservers,
        "records": records,
    }


def _names(servers: list[Server]) -> list[str]:
    return sorted({server.name for server in servers})


def _listed(items: list[str]) -> str | Sentence:
    if len(items) == 1:
        return items[0]
    return Sentence(
        gettext_noop("%(some)s and %(last)s"), {"some": ", ".join(items[:-1]), "last": items[-1]}
    )


def _quoted(answers: list[str]) -> Value:
    """The servers' answers one after the other (a semicolon between), the platform's own
    words among them ("no record") in the reader's language."""
    said = [answer_said(answer) for answer in answers]
    placeholders = "; ".join(f"%(a{i})s" for i in range(len(said)))
    return Sentence(placeholders, {f"a{i}": value for i, value in enumerate(said)})


def _one_or_many(subjects: list[str], one: str, many: str) -> str:
    """The msgid for one subject or for several (the verb agrees with them)."""
    return one if len(subjects) == 1 else many


def unreachable(zone: str, silent: list[Server]) -> dict[str, Any]:
    names = _names(silent)
    said = Sentence(
        _one_or_many(
            names,
            gettext_noop(
                "%(names)s, listed as a name server of %(zone)s, does not answer for it (a "
                "lame delegation). Resolvers that ask it wait, then try another, and a "
                "certificate authority may give up. Fix that server at your DNS provider, or "
                "remove it from %(zone)s's NS records at your registrar."
            ),
            gettext_noop(
                "%(names)s, listed as a name server of %(zone)s, do not answer for it (a lame "
                "delegation). Resolvers that ask it wait, then try another, and a certificate "
                "authority may give up. Fix that server at your DNS provider, or remove it "
                "from %(zone)s's NS records at your registrar."
            ),
        ),
        {"names": _listed(names), "zone": zone},
    )
    return _finding(FindingCode.NAMESERVER_UNREACHABLE, said, names, [])


def disagree(zone: str, right: list[Server], wrong: list[Server], needs: Needs) -> dict[str, Any]:
    names, good = _names(wrong), _names(right)
    answers = sorted({server.answer for server in wrong})
    right_said = Sentence(
        _one_or_many(
            good,
            gettext_noop("%(good)s gives the right record (%(needs)s)"),
            gettext_noop("%(good)s give the right record (%(needs)s)"),
        ),
        {"good": _listed(good), "needs": needs.described},
    )
    wrong_said = Sentence(
        _one_or_many(
            names,
            gettext_noop("%(names)s still gives another answer (%(answers)s)"),
            gettext_noop("%(names)s still give another answer (%(answers)s)"),
        ),
        {"names": _listed(names), "answers": _quoted(answers)},
    )
    said = Sentence(
        gettext_noop(
            "The name servers of %(zone)s disagree: %(right)s, but %(wrong)s. Resolvers ask "
            "any of them, so some visitors and the certificate authority get the old answer. "
            "Make the change again at your DNS provider so it reaches every name server (or "
            "ask them why it has not)."
        ),
        {"zone": zone, "right": right_said, "wrong": wrong_said},
    )
    return _finding(FindingCode.NAMESERVERS_DISAGREE, said, names, answers)


def wrong(zone: str, wrong: list[Server], needs: Needs) -> dict[str, Any]:
    names = _names(wrong)
    answers = sorted({server.answer for server in wrong})
    said = Sentence(
        _one_or_many(
            names,
            gettext_noop(
                "No name server of %(zone)s gives the record the platform needs (%(needs)s) "
                "yet: %(names)s gives %(answers)s. Create or correct the record at your DNS "
                "provider; the next check sees it as soon as the provider publishes it."
            ),
            gettext_noop(
                "No name server of %(zone)s gives the record the platform needs (%(needs)s) "
                "yet: %(names)s give %(answers)s. Create or correct the record at your DNS "
                "provider; the next check sees it as soon as the provider publishes it."
            ),
        ),
        {
            "zone": zone,
            "needs": needs.described,
            "names": _listed(names),
            "answers": _quoted(answers),
        },
    )
    return _finding(FindingCode.NAMESERVERS_WRONG, said, names, answers)


def cached(
    zone: str, needs: Needs | Delegation, result: Result, old: list[lookups.Lookup], now: datetime
) -> dict[str, Any]:
    """Every server gives what `needs` describes (the name's record, or a wildcard's
    delegation), and the resolvers still keep `old`, which the check read."""
    ttls = [answer.ttl for answer in old if answer.ttl is not None]
    # `found` joins records with "; " (a subdomain's) or ", " (an apex's addresses).
    records = [record for record in re.split(r"; |, ", result.found) if record]
    said: str | Sentence = ", ".join(records) or Sentence(gettext_noop("no record"))
    values = {"zone": zone, "needs": needs.described, "said": said}
    if ttls:
        seconds = math.ceil((now + timedelta(seconds=max(ttls))).timestamp() / 60) * 60
        gone = datetime.fromtimestamp(seconds, tz=now.tzinfo)
        message = gettext_noop(
            "Every name server of %(zone)s gives %(needs)s, but the resolvers still keep the "
            "old answer (%(said)s). It should be gone by %(gone)s UTC, when its time to live "
            "runs out; nothing to change, and the next check after that passes."
        )
        values["gone"] = f"{gone:%Y-%m-%d %H:%M}"
    else:
        message = gettext_noop(
            "Every name server of %(zone)s gives %(needs)s, but the resolvers still keep the "
            "old answer (%(said)s). It goes when its time to live runs out; nothing to "
            "change, and the next check after that passes."
        )
    return _finding(FindingCode.CACHED_ELSEWHERE, Sentence(message, values), [], records)


def extra_addresses(hostname: str, records: list[str]) -> dict[str, Any]:
    ipv6 = any(record.startswith("AAAA") for record in records)
    who = (
        gettext_noop(
            "Visitors over IPv6 and the certificate authority's validation (Let's Encrypt "
            "prefers IPv6) are sent there instead of the platform."
        )
        if ipv6
        else gettext_noop(
            "Some visitors and the certificate authority's validation are sent there instead "
            "of the platform."
        )
    )
    said = Sentence(
        _one_or_many(
            records,
            gettext_noop(
                "%(hostname)s also has %(records)s beside the right records. %(who)s Delete it."
            ),
            gettext_noop(
                "%(hostname)s also has %(records)s beside the right records. %(who)s Delete them."
            ),
        ),
        {"hostname": hostname, "records": _listed(records), "who": Sentence(who)},
    )
    return _finding(FindingCode.EXTRA_ADDRESS, said, [], records)


def undelegated(zone: str, servers: list[Server], delegation: Delegation) -> dict[str, Any]:
    names = _names(servers)
    answers = sorted({server.delegation for server in servers})
    said = Sentence(
        _one_or_many(
            names,
            gettext_noop(
                "%(names)s, a name server of %(zone)s, does not give %(needs)s (it gives "
                "%(answers)s). The platform proves the wildcard to the certificate authority "
                "through that record, and resolvers ask any of the zone's name servers, so the "
                "certificate and the check fail whenever they ask it. Add or correct the "
                "record at your DNS provider so it reaches every name server."
            ),
            gettext_noop(
                "%(names)s, name servers of %(zone)s, do not give %(needs)s (they give "
                "%(answers)s). The platform proves the wildcard to the certificate authority "
                "through that record, and resolvers ask any of the zone's name servers, so the "
                "certificate and the check fail whenever they ask one of them. Add or correct "
                "the record at your DNS provider so it reaches every name server."
            ),
        ),
        {
            "names": _listed(names),
            "zone": zone,
            "needs": delegation.described,
            "answers": _quoted(answers),
        },
    )
    return _finding(FindingCode.CHALLENGE_NOT_DELEGATED, said, names, answers)


def unasked(zone: str, left_out: LeftOut, late: list[Server]) -> dict[str, Any]:
    said = []
    if left_out.names:
        said.append(
            Sentence(
                _one_or_many(
                    list(left_out.names),
                    gettext_noop(
                        "%(zone)s lists %(count)d name servers; we ask the first %(asked)d in "
                        "alphabetical order, so %(names)s was not asked."
                    ),
                    gettext_noop(
                        "%(zone)s lists %(count)d name servers; we ask the first %(asked)d in "
                        "alphabetical order, so %(names)s were not asked."
                    ),
                ),
                {
                    "zone": zone,
                    "count": left_out.nameservers,
                    "asked": DOCTOR_NAMESERVERS,
                    "names": _some(list(left_out.names)),
                },
            )
        )
    for name, count in left_out.addresses[:NAMED_AT_MOST]:
        said.append(
            Sentence(
                gettext_noop(
                    "%(name)s has %(all)d addresses; we ask %(asked)d, so %(count)d was not asked."
                )
                if count == 1
                else gettext_noop(
                    "%(name)s has %(all)d addresses; we ask %(asked)d, so %(count)d were not asked."
                ),
                {
                    "name": name,
                    "all": count + DOCTOR_ADDRESSES_PER_NAMESERVER,
                    "asked": DOCTOR_ADDRESSES_PER_NAMESERVER,
                    "count": count,
                },
            )
        )
    if left_out.names or left_out.addresses:
        said.append(
            Sentence(
                gettext_noop(
                    "Like the resolvers, we ask at most %(servers)d name servers of a zone and "
                    "%(addresses)d addresses of each, so a server among the others that does "
                    "not answer, or still gives an old record, goes unreported here. If they "
                    "are not meant to serve the zone, remove them at your registrar or DNS "
                    "provider."
                ),
                {"servers": DOCTOR_NAMESERVERS, "addresses": DOCTOR_ADDRESSES_PER_NAMESERVER},
            )
        )
    if left_out.oversized:
        said.append(
            Sentence(
                gettext_noop(
                    "The answers for %(names)s hold more records than one DNS answer over UDP, "
                    "so we did not ask the servers they name: a zone needs a few name servers, "
                    "and a name server a few addresses."
                ),
                {"names": _some(list(left_out.oversized))},
            )
        )
    late_names = _names(late)
    if late_names:
        said.append(
            Sentence(
                gettext_noop(
                    "%(names)s could not be asked before the check's deadline; the next check "
                    "asks again."
                ),
                {"names": _some(late_names)},
            )
        )
    # The ones not asked at all first, then the ones asked at only some of their addresses.
    names = list(
        dict.fromkeys(
            [
                *left_out.names,
                *left_out.oversized,
                *late_names,
                *(n for n, _ in left_out.addresses),
            ]
        )
    )
    return _finding(FindingCode.NAMESERVERS_UNASKED, joined(*said), names[:NAMED_AT_MOST], [])


def _some(names: list[str]) -> str | Sentence:
    """The first NAMED_AT_MOST names, and how many more."""
    if len(names) <= NAMED_AT_MOST:
        return _listed(names)
    return Sentence(
        gettext_noop("%(names)s and %(more)d more"),
        {"names": ", ".join(names[:NAMED_AT_MOST]), "more": len(names) - NAMED_AT_MOST},
    )
