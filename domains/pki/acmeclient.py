"""The ACME client's side of one CA (RFC 8555, the `acme` package): the platform's account at
it, the requests it sends, and what its failures mean.

One account key for the platform (PlatformKey, sealed like every private key), registered at
each CA asked, with the CA's external account binding where it needs one: each CA holds its
own account for that key. No request follows a redirect (a hostile directory's 302 would send
the worker, with its POST turned into a GET, to any address this host reaches, the edge's
loopback key endpoint included). The CA's own failures become `Unavailable`, with their
reason and the CA's Retry-After (`connected`), so the next CA in order can be asked.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urljoin

import requests
from acme import client, errors, messages
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.conf import settings
from django.utils.translation import gettext_noop
from josepy import ES256, JWKEC

from domains import metrics
from domains.choices import CaSkipReason, PlatformKeyUse
from domains.models import AcmeChallenge, AcmeOrder, Domain
from domains.pki import sealing
from domains.pki.authority import NotReached, Refused, Unavailable, shown
from domains.pki.cas import AcmeCA
from domains.pki.platformkeys import held
from petstore.sentences import Sentence

# Seconds before asking again when the CA named no Retry-After.
DEFAULT_RETRY_AFTER = 10
USER_AGENT = "petstore-domains"


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
            said = gettext_noop("The CA answered with HTTP %(status)d; refused.")
            raise Redirected(Sentence(said, {"status": response.status_code}))
        target = shown(urljoin(response.url, location))
        said = gettext_noop("The CA answered with a redirect to %(target)s; refused.")
        raise Redirected(Sentence(said, {"target": target}))


def wait() -> timedelta:
    """How long one run waits for a CA to answer a request, validate or sign before it
    moves on to the next CA, or hands back to the task's retry (a worker must not be held
    for minutes by a slow CA)."""
    return timedelta(seconds=settings.DOMAINS_ACME_WAIT)


def connect(ca: AcmeCA, limits: RateLimits) -> client.ClientV2:
    key = JWKEC(key=account_key())
    net = client.ClientNetwork(
        key,
        alg=ES256,
        user_agent=USER_AGENT,
        verify_ssl=True,
        timeout=max(1, round(settings.DOMAINS_ACME_WAIT)),
    )
    if ca.ca_bundle:
        # requests takes a CA file where the client's signature says bool.
        net.verify_ssl = ca.ca_bundle  # type: ignore[assignment]
    net.session.hooks["response"] += [refuse_redirects, limits]
    # Belt and braces: were the hook ever lost, requests would still follow no redirect.
    net.session.max_redirects = 0
    directory = client.ClientV2.get_directory(ca.directory, net)
    acme = client.ClientV2(directory, net)
    binding = None
    if ca.eab is not None:
        kid, hmac_key = ca.eab
        binding = messages.ExternalAccountBinding.from_data(
            account_public_key=key.public_key(), kid=kid, hmac_key=hmac_key, directory=directory
        )
    registration = messages.NewRegistration.from_data(
        email=settings.DOMAINS_ACME_EMAIL or None,
        terms_of_service_agreed=True,
        external_account_binding=binding,
    )
    try:
        acme.new_account(registration)
    except errors.ConflictError as existing:
        net.account = messages.RegistrationResource(
            uri=existing.location, body=messages.Registration()
        )
    return acme


def post_as_get(acme: client.ClientV2, url: str) -> requests.Response:
    """POST-as-GET (RFC 8555 §6.3): how an ACME client reads an order or authorization."""
    return acme.net.post(url, None, new_nonce_url=acme.directory["newNonce"])


def problem(error: Any) -> str:
    detail = getattr(error, "detail", None) or str(error)
    return f'"{detail}"'


def forget(domain: Domain) -> None:
    """The domain's order is done or refused: the next attempt places a new one."""
    AcmeChallenge.objects.filter(domain=domain).delete()
    AcmeOrder.objects.filter(domain=domain).delete()


def not_validated() -> Unavailable:
    return Unavailable(
        "The certificate authority has not validated the domain yet.",
        reason=CaSkipReason.SLOW,
        retry_after=DEFAULT_RETRY_AFTER,
    )


def server_error(error: errors.ClientError) -> bool:
    """Whether the CA answered a request with a 5xx that carried no problem document."""
    # The client raises ClientError(response), or ClientError((response, error)) when the
    # body was JSON but no problem document.
    [what] = error.args[:1] or [None]
    response = what[0] if isinstance(what, tuple) else what
    return isinstance(response, requests.Response) and response.status_code >= 500


@contextmanager
def connected(domain: Domain, ca: AcmeCA) -> Iterator[client.ClientV2]:
    """A client with the platform's account at `ca`, working on `domain`'s order, the CA's own
    failures `Unavailable` (`ca_failures`). A refusal (the CA's, a redirect, a certificate
    that is not the one ordered) forgets the order."""
    limits = RateLimits()
    try:
        with ca_failures(limits):
            yield connect(ca, limits)
    except Refused:
        metrics.acme_error("refused")
        forget(domain)
        raise
    except NotReached:
        metrics.acme_error("not_reached")
        forget(domain)  # invalid at the CA: the next attempt places a new order
        raise


@contextmanager
def ca_failures(limits: RateLimits) -> Iterator[None]:
    """The CA's own failures as `Unavailable`, each with its reason
    (domains.choices.CaSkipReason), and counted: a rate limit (429), with the CA's
    Retry-After (`limits` keeps it); a server error (RFC 8555 `serverInternal`, or a 5xx
    without a problem document); a CA that cannot be reached, or that does not answer within
    DOMAINS_ACME_WAIT."""
    try:
        yield
    except messages.Error as error:
        metrics.acme_error(error.code or "unknown")
        if error.code == "rateLimited":
            raise Unavailable(
                f"The certificate authority limits our rate: {problem(error)}",
                reason=CaSkipReason.RATE_LIMITED,
                retry_after=limits.retry_after(),
            ) from error
        if error.code == "serverInternal":
            raise Unavailable(
                f"The certificate authority answered with a server error: {problem(error)}",
                reason=CaSkipReason.SERVER_ERROR,
                retry_after=limits.retry_after(),
            ) from error
        raise
    except errors.ClientError as error:
        if not server_error(error):
            raise
        metrics.acme_error("server_error")
        raise Unavailable(
            "The certificate authority answered with a server error.",
            reason=CaSkipReason.SERVER_ERROR,
            retry_after=limits.retry_after(),
        ) from error
    except requests.Timeout as error:
        metrics.acme_error("unreachable")
        raise Unavailable(
            f"The certificate authority did not answer within {settings.DOMAINS_ACME_WAIT:g} s: "
            f"{error}",
            reason=CaSkipReason.SLOW,
            retry_after=DEFAULT_RETRY_AFTER,
        ) from error
    except requests.RequestException as error:
        metrics.acme_error("unreachable")
        raise Unavailable(
            f"The certificate authority is unreachable: {error}",
            reason=CaSkipReason.UNREACHABLE,
            retry_after=DEFAULT_RETRY_AFTER,
        ) from error
