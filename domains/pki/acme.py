"""Certificates from an ACME certificate authority (RFC 8555), with the `acme` client.

One account per platform: its key is a row (PlatformKey, domains/pki/platformkeys.py, sealed like
every private key), created on first use by whichever process comes first, and registered
again on each run, which an ACME server answers with the existing account. So every
certificates worker, on any host, is the same account and can resume another's order.

A domain has at most one order under way (`AcmeOrder`, one-to-one with the domain), so a
run resumes the order another placed. No lock is held while the CA is asked: two runs that
place an order at once both reach the CA, the first stored is kept and the other left to
expire there. `prepare` answers its HTTP-01 challenges (the rows the host routing serves)
and waits a little for the CA to validate them; `issue` finalizes the order, or collects
the certificate of an order finalized by a run that died; `stored`, in the transaction
that stores the certificate, forgets the order. A CA that is not done
yet, or that limits our rate (429), is `Pending` with its Retry-After; an
invalid authorization or order is `Refused` with the CA's own detail.

The CA is not trusted beyond its answers: no request follows a redirect (a
hostile directory's 302 would send the worker, with its POST turned into a GET,
to any address this host reaches, the edge's loopback key endpoint included),
and the certificate it returns is stored only if it is the one ordered
(`issued_from_pem`). Either refuses the order with the reason.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urljoin

import requests
from acme import challenges, client, crypto_util, errors, messages
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.conf import settings
from josepy import ES256, JWKEC

from domains import metrics
from domains.choices import CertCode, PlatformKeyUse
from domains.models import AcmeChallenge, AcmeOrder, Domain
from domains.pki import sealing
from domains.pki.authority import (
    Issued,
    NotReached,
    Pending,
    Refused,
    RenewalInfo,
    issued_from_pem,
    shown,
)
from domains.pki.platformkeys import held
from domains.policy import RENEWAL_INFO_AT_MOST, renewal_time

logger = logging.getLogger(__name__)

# How long one run waits for the CA to validate or to sign before it hands back to the
# task's retry (a worker must not be held for minutes by a slow CA).
WAIT = timedelta(seconds=30)
# Seconds before asking again when the CA named no Retry-After.
DEFAULT_RETRY_AFTER = 10
USER_AGENT = "petstore-domains"
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


def _create_account_key() -> tuple[str, str]:
    return sealing.seal(sealing.pem(sealing.new_key())), ""


def account_key() -> ec.EllipticCurvePrivateKey:
    stored = held(PlatformKeyUse.ACME_ACCOUNT, _create_account_key)
    key = serialization.load_pem_private_key(sealing.unseal(stored.key_pem).encode(), None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise TypeError("the ACME account's stored key is not an EC private key")
    return key


class RateLimits:
    """Remembers the Retry-After of the CA's last refusal: the `acme` client raises the
    problem document and drops the response that carried the header."""

    def __init__(self) -> None:
        self.last: requests.Response | None = None

    def __call__(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        if response.status_code in (429, 503):
            self.last = response

    def retry_after(self) -> float:
        if self.last is None:
            return DEFAULT_RETRY_AFTER
        when = client.ClientV2.retry_after(self.last, DEFAULT_RETRY_AFTER)
        return max((when - datetime.now()).total_seconds(), 1.0)


class Redirected(Refused):
    """The CA answered with a redirect, which is never followed."""


def refuse_redirects(response: requests.Response, *args: Any, **kwargs: Any) -> None:
    """A response hook: `requests` runs it before it would follow a redirect, so raising here
    means the target is never asked (the `acme` client offers no way to pass
    allow_redirects=False on each of its requests)."""
    if 300 <= response.status_code < 400:
        location = response.headers.get("Location")
        if location is None:
            raise Redirected(f"The CA answered with HTTP {response.status_code}; refused.")
        target = shown(urljoin(response.url, location))
        raise Redirected(f"The CA answered with a redirect to {target}; refused.")


def _connect(limits: RateLimits) -> client.ClientV2:
    bundle = settings.DOMAINS_ACME_CA_BUNDLE
    net = client.ClientNetwork(
        JWKEC(key=account_key()), alg=ES256, user_agent=USER_AGENT, verify_ssl=True
    )
    if bundle:
        # requests takes a CA file where the client's signature says bool.
        net.verify_ssl = bundle  # type: ignore[assignment]
    net.session.hooks["response"] += [refuse_redirects, limits]
    # Belt and braces: were the hook ever lost, requests would still follow no redirect.
    net.session.max_redirects = 0
    acme = client.ClientV2(client.ClientV2.get_directory(settings.DOMAINS_ACME_DIRECTORY, net), net)
    registration = messages.NewRegistration.from_data(
        email=settings.DOMAINS_ACME_EMAIL or None, terms_of_service_agreed=True
    )
    try:
        acme.new_account(registration)
    except errors.ConflictError as existing:
        net.account = messages.RegistrationResource(
            uri=existing.location, body=messages.Registration()
        )
    return acme


def _get(acme: client.ClientV2, url: str) -> requests.Response:
    """POST-as-GET (RFC 8555 §6.3): how an ACME client reads an order or authorization."""
    return acme.net.post(url, None, new_nonce_url=acme.directory["newNonce"])


def _problem(error: Any) -> str:
    detail = getattr(error, "detail", None) or str(error)
    return f'"{detail}"'


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
    def caa_identity(self) -> str:
        # An ACME directory need not publish its CAA identity (Pebble does not): a setting.
        return settings.DOMAINS_CA_IDENTIFIER

    def prepare(self, domain: Domain) -> None:
        with connected(domain) as acme:
            order = self._order(acme, domain)
            body = messages.Order.from_json(_get(acme, order.url).json())
            if body.status == messages.STATUS_INVALID:
                self._failed(self._errors(acme, body))
            if body.status != messages.STATUS_PENDING:
                return
            for url in body.authorizations:
                self._answer(acme, domain, url)
            deadline = datetime.now() + WAIT
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
                raise Pending(
                    "The certificate authority has not validated the domain yet.",
                    retry_after=DEFAULT_RETRY_AFTER,
                ) from slow

    def issue(self, domain: Domain) -> Issued:
        order = AcmeOrder.objects.filter(domain=domain).first()
        if order is None:
            raise Pending("No ACME order yet.", retry_after=1)
        with connected(domain) as acme:
            body = messages.Order.from_json(_get(acme, order.url).json())
            resource = messages.OrderResource(
                body=body, uri=order.url, csr_pem=order.csr_pem.encode()
            )
            deadline = datetime.now() + WAIT
            try:
                if body.status == messages.STATUS_READY:
                    resource = acme.finalize_order(resource, deadline)
                elif body.status in (messages.STATUS_PROCESSING, messages.STATUS_VALID):
                    # A run that died after finalizing: collect that order's certificate.
                    resource = acme.poll_finalization(resource, deadline)
                elif body.status == messages.STATUS_INVALID:
                    self._failed(self._errors(acme, body))
                else:
                    raise Pending(
                        "The certificate authority has not validated the domain yet.",
                        retry_after=DEFAULT_RETRY_AFTER,
                    )
            except errors.IssuanceError as refused:
                self._refuse(domain, _problem(refused.error))
            except errors.TimeoutError as slow:
                raise Pending(
                    "The certificate authority has not signed yet.",
                    retry_after=DEFAULT_RETRY_AFTER,
                ) from slow
            return issued_from_pem(
                resource.fullchain_pem, sealing.unseal(order.key_pem), hostname=domain.hostname
            )

    def stored(self, domain: Domain) -> None:
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
            acme = _connect(RateLimits())
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
        if order is not None:
            return order
        key = sealing.new_key()
        csr_pem = crypto_util.make_csr(sealing.pem(key).encode(), [domain.hostname])
        placed = acme.new_order(csr_pem)
        order, _ = AcmeOrder.objects.get_or_create(
            domain=domain,
            defaults={
                "url": placed.uri,
                "csr_pem": csr_pem.decode(),
                "key_pem": sealing.seal(sealing.pem(key)),
            },
        )
        return order

    def _answer(self, acme: client.ClientV2, domain: Domain, url: str) -> None:
        authorization = messages.Authorization.from_json(_get(acme, url).json())
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
        self._refuse(domain, "the certificate authority offered no HTTP-01 challenge")

    def _errors(self, acme: client.ClientV2, body: messages.Order) -> list[Any]:
        """The problems an invalid order's authorizations and the order itself carry."""
        found = []
        for url in body.authorizations:
            authorization = messages.Authorization.from_json(_get(acme, url).json())
            found += [c.error for c in authorization.challenges if c.error is not None]
        if body.error is not None:
            found.append(body.error)
        return found

    def _failed(self, problems: list[Any]) -> None:
        """The order failed: ours to retry when every problem is the CA not reaching us,
        else refused, in the CA's words (`connected` forgets the order either way)."""
        reason = "; ".join(_problem(error) for error in problems)
        if problems and all(not_reached(error) for error in problems):
            raise NotReached(
                "The certificate authority could not reach this domain's challenge through "
                f"the platform: {reason}. The platform will try again by itself."
            )
        raise Refused(
            f"{CertCode.CA_REFUSED.label}: "
            f"{reason or 'the order became invalid and the CA gave no detail'}"
        )

    def _refuse(self, domain: Domain, reason: str) -> None:
        """Say why, in the CA's words (`connected` forgets the order)."""
        raise Refused(f"{CertCode.CA_REFUSED.label}: {reason}")


def forget(domain: Domain) -> None:
    """The domain's order is done or refused: the next attempt places a new one."""
    AcmeChallenge.objects.filter(domain=domain).delete()
    AcmeOrder.objects.filter(domain=domain).delete()


@contextmanager
def connected(domain: Domain) -> Iterator[client.ClientV2]:
    """A client with the platform's account, working on `domain`'s order; a rate limit (429)
    or an unreachable CA becomes `Pending`, with the CA's Retry-After when it gave one; a
    refusal (the CA's, a redirect, a certificate that is not the one ordered) forgets the
    order."""
    limits = RateLimits()
    try:
        yield _connect(limits)
    except Refused:
        metrics.acme_error("refused")
        forget(domain)
        raise
    except NotReached:
        metrics.acme_error("not_reached")
        forget(domain)  # invalid at the CA: the next attempt places a new order
        raise
    except messages.Error as error:
        metrics.acme_error(error.code or "unknown")
        if error.code != "rateLimited":
            raise
        raise Pending(
            f"The certificate authority limits our rate: {_problem(error)}",
            retry_after=limits.retry_after(),
        ) from error
    except requests.RequestException as error:
        metrics.acme_error("unreachable")
        raise Pending(
            f"The certificate authority is unreachable: {error}",
            retry_after=DEFAULT_RETRY_AFTER,
        ) from error
