"""Certificate authorities in order: which CAs an order may go to, and when it moves on from
one to the next (docs/decisions/domains.md, "Certificate authorities in order").

The CAs are asked in the order of DOMAINS_ACME_DIRECTORIES, the preferred first (renewal:
the CA that issued the certificate it replaces), and only those the domain's CAA records
allow: CAA is checked against the CA actually used. An order under way is resumed at its
own CA before any other. The order moves on only when the CA fails for a reason of its own
(`pki.Unavailable`: rate limited, a server error, unreachable, slow), and a renewal waits
out a rate limit of the CA it prefers while its certificate has the time; never on the
owner's refusal (CAA, a validation the CA refused, `pki.Refused`) or on our own outage
(`pki.NotReached`), which no other CA would see differently. A CA that limited our rate is
not asked again before its Retry-After, by any worker. Each skip is an Activity line and
counted (petstore_acme_skips_total) with its reason.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import redis
from django.conf import settings
from django.core.cache import cache
from django.utils.translation import gettext_noop, override

from domains import metrics, pki
from domains.choices import Action, CaSkipReason
from domains.dns.caa import caa
from domains.dns.results import CheckResult
from domains.models import AcmeOrder, Domain
from domains.services.events import record_event
from petstore.sentences import Sentence

log = logging.getLogger(__name__)

# When a CA that limited our rate may be asked again (Unix time), kept in the cache (Redis)
# until then, so no worker asks it before its Retry-After: asking a CA past its limit makes
# the limit last longer.
RESTING_KEY = "petstore:acme:resting:{}"


class Patience(Protocol):
    def waits_for(self, domain: Domain, unavailable: pki.Unavailable) -> bool:
        """Whether to wait for this CA (its Retry-After) rather than ask the next."""
        ...


@dataclass(frozen=True)
class Candidates:
    """The CAs to ask, in order; the first is the one the order is meant for."""

    authorities: list[pki.Authority]
    caa: CheckResult


@dataclass(frozen=True)
class Obtained:
    authority: pki.Authority
    issued: pki.Issued
    renew_after: datetime
    # Not from the CA the order was meant for: that one (or more) was skipped.
    fallback: bool


def candidates(domain: Domain, *, prefer: list[str]) -> Candidates:
    """The CAs `domain`'s CAA records allow, `prefer` first, then in their configured order
    (none when CAA blocks them all: `caa` says why)."""
    ordered = pki.authorities(prefer=prefer)
    result, allowed = caa(domain.hostname, [name for ca in ordered for name in ca.caa_identities()])
    usable = [ca for ca in ordered if allowed.intersection(ca.caa_identities())]
    return Candidates(usable if result.ok else [], result)


def first_to_issue(domain: Domain, authorities: list[pki.Authority], way: Patience) -> Obtained:
    """The certificate from the first of `authorities` that issues it, the CA an order is
    under way at asked first. Raises what the last one asked raised."""
    meant = authorities[0]
    at = AcmeOrder.objects.filter(domain=domain).values_list("directory", flat=True).first()
    asked = sorted(authorities, key=lambda ca: ca.name != at) if at else authorities
    for position, authority in enumerate(asked):
        try:
            not_resting(authority.name)
            authority.prepare(domain)
            issued = authority.issue(domain)
        except pki.Unavailable as unavailable:
            rest(authority.name, unavailable)
            following = asked[position + 1 :]
            if not following or way.waits_for(domain, unavailable):
                raise
            authority.abandon(domain)
            _skipped(domain, authority, following[0], unavailable)
            continue
        fallback = authority.name != meant.name
        return Obtained(authority, issued, authority.renew_after(issued), fallback)
    raise LookupError(f"no certificate authority to ask for {domain.hostname}")


def not_resting(ca: str) -> None:
    """Raises `Unavailable` (rate limited) while the CA named `ca` (its directory) asked us
    to wait."""
    try:
        until = cache.get(RESTING_KEY.format(ca)) if ca else None
    except redis.RedisError:
        return  # not known: asked, and it says so again if it must
    left = (until or 0.0) - time.time()
    if left > 0:
        raise pki.Unavailable(
            f"The certificate authority limits our rate for {left:.0f} s more.",
            reason=CaSkipReason.RATE_LIMITED,
            retry_after=left,
        )


def rest(ca: str, unavailable: pki.Unavailable) -> None:
    """Keeps the Retry-After of the CA named `ca` when it limited our rate."""
    if unavailable.reason != CaSkipReason.RATE_LIMITED or not ca:
        return
    seconds = unavailable.retry_after
    try:
        cache.set(RESTING_KEY.format(ca), time.time() + seconds, math.ceil(seconds))
    except redis.RedisError as error:
        log.warning("Could not keep %s's Retry-After (%s)", ca, error)


def _skipped(
    domain: Domain, skipped: pki.Authority, following: pki.Authority, why: pki.Unavailable
) -> None:
    metrics.acme_skipped(skipped.name, why.reason)
    # The CA's own words, for the operator (PetstoreAcmeFallbackCarrying points here).
    log.warning("%s skipped for %s, %s asked: %s", skipped.name, domain, following.name, why)
    with override(settings.LANGUAGE_CODE):
        reason = Sentence(str(CaSkipReason(why.reason).label))  # its msgid
    said = Sentence(
        gettext_noop("%(ca)s did not issue: %(reason)s. The platform asked %(next)s instead."),
        {"ca": skipped.label, "reason": reason, "next": following.label},
    )
    record_event(domain=domain, action=Action.CA_SKIPPED, said=said)
