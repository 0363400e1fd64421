"""Certificates from an ACME certificate authority (RFC 8555), with the `acme` client.

One AcmeAuthority per CA of DOMAINS_ACME_DIRECTORIES (domains/pki/cas.py), asked in their
order by domains/services/fallback.py. One account key per platform: a row (PlatformKey,
domains/pki/platformkeys.py, sealed like every private key), created on first use by
whichever process comes first, and registered on each run at the CA asked
(domains/pki/acmeclient.py), which an ACME server answers with the existing account: each
CA holds its own account for that key. So every certificates worker, on any host, is the
same account at each CA and can resume another's order there.

A domain has at most one order under way (`AcmeOrder`, one-to-one with the domain), so a
run resumes the order another placed. No lock is held while the CA is asked: two runs that
place an order at once both reach the CA, the first stored is kept and the other left to
expire there. `prepare` answers its HTTP-01 challenges (the rows the host routing serves)
and waits a little for the CA to validate them; `issue` finalizes the order, or collects
the certificate of an order finalized by a run that died; `stored`, in the transaction
that stores the certificate, forgets the order. A CA that limits our rate (429), answers
with a server error, cannot be reached, or is not done within DOMAINS_ACME_WAIT is
`Unavailable` (the CA's own failure: the next CA is asked), with its Retry-After; an
invalid authorization or order is `Refused` with the CA's own detail.

The CA is not trusted beyond its answers: no request follows a redirect
(domains/pki/acmeclient.py), and the certificate it returns is stored only if it is the
one ordered (`issued_from_pem`). Either refuses the order with the reason.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import requests
from acme import challenges, client, crypto_util, errors, messages
from django.conf import settings
from django.utils.translation import gettext_noop

from domains.choices import CaSkipReason
from domains.dns.challenges import ProviderError
from domains.dns.rfc2136 import Rfc2136
from domains.models import AcmeChallenge, AcmeOrder, Domain
from domains.pki import dns01, sealing
from domains.pki.acmeclient import (
    DEFAULT_RETRY_AFTER,
    RateLimits,
    connect,
    connected,
    forget,
    not_validated,
    post_as_get,
    problem,
    wait,
)
from domains.pki.authority import (
    Issued,
    NotReached,
    Pending,
    Refused,
    RenewalInfo,
    Unavailable,
    issued_from_pem,
)
from domains.pki.cas import AcmeCA
from domains.policy import PLACED_ORDER_STORED_WITHIN, RENEWAL_INFO_AT_MOST, renewal_time
from petstore.database.outages import outlasting_outages
from petstore.sentences import Sentence

logger = logging.getLogger(__name__)

# A 5xx the CA got from us when it fetched a challenge, in Pebble's words ("... returned
# 502") or Let's Encrypt's ("Invalid response from <url>: 503").
SERVER_ERROR = re.compile(r"(?:returned|:)\s+5\d\d\b")
# A connection to us that failed, not a name that did not resolve (the owner's DNS, which
# CAs report as a `connection` problem too): refused, reset, timed out, or closed before an
# answer (Go's `EOF`, when an edge node dies with the CA's request on it).
CONNECTION_FAILED = re.compile(
    r"connection refused|connection reset|timeout|timed out|deadline exceeded|\bEOF\b",
    re.IGNORECASE,
)


def not_reached(error: Any) -> bool:
    """Whether a challenge's error says the CA could not reach us: it could not connect
    (refused, reset, timed out: `connection`) or our edge answered with a 5xx. Not the
    owner's: a name pointing elsewhere fails the platform's own DNS check."""
    code = getattr(error, "code", None)
    detail = getattr(error, "detail", None) or ""
    if code == "connection":
        return bool(CONNECTION_FAILED.search(detail))
    return code == "unauthorized" and bool(SERVER_ERROR.search(detail))


class AcmeAuthority:
    def __init__(self, ca: AcmeCA):
        self.ca = ca
        self.name = ca.directory
        self.label = ca.label

    def caa_identities(self) -> tuple[str, ...]:
        # An ACME directory need not publish its CAA identity (Pebble does not): a setting.
        return self.ca.caa_identities

    def prepare(self, domain: Domain) -> None:
        if domain.is_wildcard:
            # A wildcard's order is one DNS-01 run, from start to certificate, in `issue`.
            return
        with connected(domain, self.ca) as acme:
            order = self._order(acme, domain)
            body = messages.Order.from_json(post_as_get(acme, order.url).json())
            if body.status == messages.STATUS_INVALID:
                self._failed(self._errors(acme, body))
            if body.status != messages.STATUS_PENDING:
                return
            for url in body.authorizations:
                self._answer(acme, domain, url)
            deadline = datetime.now() + wait()
            try:
                acme.poll_authorizations(messages.OrderResource(body=body, uri=order.url), deadline)
            except errors.ValidationError as failed:
                self._failed(
                    [
                        challenge.error
                        for authz in failed.failed_authzrs
                        for challenge in authz.body.challenges
                        if challenge.error is not None
                    ]
                )
            except errors.TimeoutError as slow:
                raise not_validated() from slow

    def issue(self, domain: Domain) -> Issued:
        if domain.is_wildcard:
            return self._issue_wildcard(domain)
        order = AcmeOrder.objects.filter(domain=domain).first()
        if order is None or not self._holds(order):
            raise Pending("No ACME order at this certificate authority yet.", retry_after=1)
        with connected(domain, self.ca) as acme:
            body = messages.Order.from_json(post_as_get(acme, order.url).json())
            resource = messages.OrderResource(
                body=body, uri=order.url, csr_pem=order.csr_pem.encode()
            )
            deadline = datetime.now() + wait()
            try:
                if body.status == messages.STATUS_READY:
                    resource = acme.finalize_order(resource, deadline)
                elif body.status in (messages.STATUS_PROCESSING, messages.STATUS_VALID):
                    # A run that died after finalizing: collect that order's certificate.
                    resource = acme.poll_finalization(resource, deadline)
                elif body.status == messages.STATUS_INVALID:
                    self._failed(self._errors(acme, body))
                else:
                    raise not_validated()
            except errors.IssuanceError as refused:
                raise _ca_refused(problem(refused.error)) from refused
            except errors.TimeoutError as slow:
                raise Unavailable(
                    "The certificate authority has not signed yet.",
                    reason=CaSkipReason.SLOW,
                    retry_after=DEFAULT_RETRY_AFTER,
                ) from slow
            return issued_from_pem(
                resource.fullchain_pem, sealing.unseal(order.key_pem), hostname=domain.hostname
            )

    def _issue_wildcard(self, domain: Domain) -> Issued:
        """A wildcard over DNS-01 (the only challenge for one): the TXT written through the
        platform's provider at the claim's own name under acme.PLATFORM_DOMAIN, which the
        owner's `_acme-challenge` CNAME delegates to. The platform's provider refusing, or its
        zone's servers lagging, is ours: retried, never the owner's refusal."""
        if not settings.DOMAINS_DNS01_SERVER:
            raise NotReached(
                Sentence(gettext_noop("Wildcard certificates wait for the platform's DNS-01."))
            )
        delegated = domain.acme_challenge_target
        try:
            return dns01.issue(
                [domain.hostname],
                ca=self.ca,
                provider=Rfc2136.from_settings(),
                at=lambda name: delegated,
            )
        except ProviderError as failed:
            logger.warning("DNS-01 for %s did not complete: %s", domain.hostname, failed)
            raise NotReached(
                Sentence(
                    gettext_noop(
                        "The platform could not publish the DNS-01 record of this wildcard "
                        "yet; it tries again."
                    )
                )
            ) from failed

    def stored(self, domain: Domain) -> None:
        forget(domain)

    def abandon(self, domain: Domain) -> None:
        # Left to expire at the CA: nothing there needs undoing.
        forget(domain)

    def renew_after(self, issued: Issued) -> datetime:
        """A random point in the window the CA suggests (ACME Renewal Information, RFC
        9773: `ClientV2.renewal_time`) when its directory offers `renewalInfo`; else, or when
        the window cannot be read, two thirds into the validity, jittered (policy)."""
        planned = renewal_time(issued.not_before, issued.not_after)
        [read] = self.renewal_information([issued.pem])
        if isinstance(read, Exception):
            logger.warning("The CA's renewal window for %s could not be read: %s", issued.san, read)
            return planned
        return read.renew_at or planned

    def renewal_information(self, pems: Sequence[str]) -> list[RenewalInfo | Exception]:
        """Each certificate's window read again (`ClientV2.renewal_time`, one connection to
        the CA for all), and when to read it next: the CA's Retry-After, at most a day away
        (RFC 9773 §4.3.3). A directory without `renewalInfo` is asked again as often, in
        case the CA starts offering it; that costs no request per certificate."""
        try:
            acme = connect(self.ca, RateLimits())
        except (errors.Error, messages.Error, requests.RequestException) as error:
            return [error for _ in pems]
        found: list[RenewalInfo | Exception] = []
        for pem in pems:
            try:
                renew_at, again = acme.renewal_time(pem.encode())
            except (errors.Error, messages.Error, requests.RequestException) as error:
                found.append(error)
                if isinstance(error.__cause__ or error, requests.RequestException):
                    # The CA stopped answering: the rest wait for the next run, rather than
                    # holding the certificates worker a network timeout each.
                    return found + [error for _ in pems[len(found) :]]
                continue
            # acme writes its times in this machine's local time, without a zone.
            latest = datetime.now(UTC) + RENEWAL_INFO_AT_MOST
            found.append(
                RenewalInfo(
                    renew_at.astimezone(UTC) if renew_at else None,
                    min(again.astimezone(UTC), latest),
                )
            )
        return found

    def _order(self, acme: client.ClientV2, domain: Domain) -> AcmeOrder:
        """The domain's order under way, placed now if there is none (no lock held while
        the CA answers; a concurrent run's order, stored first, is the one kept)."""
        order = AcmeOrder.objects.filter(domain=domain).first()
        if order is not None and self._holds(order):
            return order
        if order is not None:
            # At a CA the domain's CAA records no longer allow: left to expire there.
            forget(domain)
        key = sealing.new_key()
        csr_pem = crypto_util.make_csr(sealing.pem(key).encode(), [domain.hostname])
        placed = acme.new_order(csr_pem)
        defaults = {
            "directory": self.name,
            "url": placed.uri,
            "csr_pem": csr_pem.decode(),
            "key_pem": sealing.seal(sealing.pem(key)),
        }
        # The order exists at the CA from here on, known only by this answer's URL.
        order, _ = outlasting_outages(
            lambda: AcmeOrder.objects.get_or_create(domain=domain, defaults=defaults),
            within=PLACED_ORDER_STORED_WITHIN.total_seconds(),
        )
        if not self._holds(order):
            raise Pending("Another run's order, at another CA, is under way.", retry_after=1)
        return order

    def _holds(self, order: AcmeOrder) -> bool:
        """Whether `order` is at this CA (one placed before orders named theirs: any)."""
        return order.directory in {"", self.name}

    def _answer(self, acme: client.ClientV2, domain: Domain, url: str) -> None:
        authorization = messages.Authorization.from_json(post_as_get(acme, url).json())
        if authorization.status != messages.STATUS_PENDING:
            return
        for challenge in authorization.challenges:
            if not isinstance(challenge.chall, challenges.HTTP01):
                continue
            response, validation = challenge.response_and_validation(acme.net.key)
            # Committed before the CA is told: any web process must be able to answer.
            AcmeChallenge.objects.update_or_create(
                token=challenge.chall.encode("token"),
                defaults={"domain": domain, "key_authorization": validation},
            )
            if challenge.status == messages.STATUS_PENDING:
                acme.answer_challenge(challenge, response)
            return
        raise _ca_refused(
            Sentence(gettext_noop("the certificate authority offered no HTTP-01 challenge"))
        )

    def _errors(self, acme: client.ClientV2, body: messages.Order) -> list[Any]:
        """The problems an invalid order's authorizations and the order itself carry."""
        found = []
        for url in body.authorizations:
            authorization = messages.Authorization.from_json(post_as_get(acme, url).json())
            found += [c.error for c in authorization.challenges if c.error is not None]
        if body.error is not None:
            found.append(body.error)
        return found

    def _failed(self, problems: list[Any]) -> None:
        """The order failed: ours to retry when every problem is the CA not reaching us,
        else refused, in the CA's words (`connected` forgets the order either way)."""
        reason = "; ".join(problem(error) for error in problems)
        if problems and all(not_reached(error) for error in problems):
            raise NotReached(
                Sentence(
                    gettext_noop(
                        "The certificate authority could not reach this domain's challenge "
                        "through the platform: %(reason)s. The platform will try again by itself."
                    ),
                    {"reason": reason},
                )
            )
        no_detail = Sentence(gettext_noop("the order became invalid and the CA gave no detail"))
        raise _ca_refused(reason or no_detail)


def _ca_refused(reason: str | Sentence) -> Refused:
    """The CA said no: its words (`reason`, as it gave them) quoted in the platform's
    (`connected` forgets the order)."""
    return Refused(
        Sentence(gettext_noop("The CA refused the order: %(reason)s"), {"reason": reason})
    )
