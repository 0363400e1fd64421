"""A certificate from an ACME CA over DNS-01 (RFC 8555 §8.4), the only challenge a wildcard
name can be validated with: the platform's own names, in a zone a DNS provider writes
(domains/dns/challenges.py).

One run does the whole order: a new key and order, each authorization's TXT value presented
through the provider, the wait until every authoritative server of the zone serves them
(bounded by DOMAINS_DNS01_WAIT), the challenges answered, the order finalized within
DOMAINS_ACME_WAIT, and the records cleaned up whatever happened (a record left behind by a
cleanup that failed is logged: it is harmless, a CA only reads it for an order of ours). No
order is kept across runs: the names are the platform's, not a tenant's, and a run that dies
leaves an order the CA expires.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime

from acme import challenges, crypto_util, errors, messages
from django.conf import settings
from django.utils.translation import gettext_noop

from domains.choices import CaSkipReason
from domains.dns.challenges import Provider, ProviderError, record_name, wait_served
from domains.pki import sealing
from domains.pki.acmeclient import (
    DEFAULT_RETRY_AFTER,
    RateLimits,
    ca_failures,
    connect,
    problem,
    wait,
)
from domains.pki.authority import Issued, Refused, Unavailable, issued_from_pem
from domains.pki.cas import AcmeCA
from petstore.sentences import Sentence

logger = logging.getLogger(__name__)


def issue(
    names: Sequence[str],
    *,
    ca: AcmeCA,
    provider: Provider,
    at: Callable[[str], str] = record_name,
) -> Issued:
    """A certificate for `names` (wildcards too; `san` is the first) from `ca`, validated over
    DNS-01 through `provider`. `at`: where a name's TXT record is written, in the provider's
    zone: its own `_acme-challenge` name (the platform's names), or the platform's name an
    owner's `_acme-challenge` CNAME delegates it to (a wildcard domain), which the CA follows.
    `ProviderError` when the provider refuses or the zone's servers do not serve the records in
    time; `Refused` when the CA finds them wrong; `Unavailable` for the CA's own failures (a
    rate limit, a server error, unreachable: acmeclient.ca_failures) and when it is not done
    within DOMAINS_ACME_WAIT."""
    limits = RateLimits()
    with ca_failures(limits):
        return _issue(names, ca=ca, provider=provider, at=at, limits=limits)


def _issue(
    names: Sequence[str],
    *,
    ca: AcmeCA,
    provider: Provider,
    at: Callable[[str], str],
    limits: RateLimits,
) -> Issued:
    key_pem = sealing.pem(sealing.new_key())
    csr_pem = crypto_util.make_csr(key_pem.encode(), list(names))
    acme = connect(ca, limits)
    order = acme.new_order(csr_pem)
    presented: dict[str, list[str]] = defaultdict(list)
    answers = []
    try:
        for authorization in order.authorizations:
            if authorization.body.status != messages.STATUS_PENDING:
                continue
            challenge = _dns01(authorization.body)
            response, validation = challenge.response_and_validation(acme.net.key)
            name = at(authorization.body.identifier.value)
            provider.present(name, validation)
            presented[name].append(validation)
            answers.append((challenge, response))
        deadline = time.monotonic() + settings.DOMAINS_DNS01_WAIT
        for name, values in presented.items():
            wait_served(provider.zone, name, values, deadline=deadline)
        for challenge, response in answers:
            acme.answer_challenge(challenge, response)
        finalized = acme.poll_and_finalize(order, datetime.now() + wait())
    except errors.ValidationError as failed:
        found = [
            problem(challenge.error)
            for authorization in failed.failed_authzrs
            for challenge in authorization.body.challenges
            if challenge.error is not None
        ]
        raise Refused(
            Sentence(
                gettext_noop("The CA refused the order: %(reason)s"),
                {"reason": "; ".join(found) or "no detail"},
            )
        ) from failed
    except errors.TimeoutError as slow:
        raise Unavailable(
            "The certificate authority did not validate or sign in time.",
            reason=CaSkipReason.SLOW,
            retry_after=DEFAULT_RETRY_AFTER,
        ) from slow
    finally:
        _clean(provider, presented)
    first, *also = names
    return issued_from_pem(finalized.fullchain_pem, key_pem, hostname=first, also=also)


def _dns01(authorization: messages.Authorization) -> messages.ChallengeBody:
    for challenge in authorization.challenges:
        if isinstance(challenge.chall, challenges.DNS01):
            return challenge
    raise Refused(Sentence(gettext_noop("the certificate authority offered no DNS-01 challenge")))


def _clean(provider: Provider, presented: dict[str, list[str]]) -> None:
    for name, values in presented.items():
        for value in values:
            try:
                provider.clean(name, value)
            except ProviderError as error:
                logger.warning("A DNS-01 record was left in place: %s", error)
