"""Which certificate the edge serves for a name a client sent in its TLS handshake (SNI).

The same rule as serving over HTTP (domains/routing/resolver.py): a live domain
whose certificate is issued (`active`) and currently valid, read from the rows
as they are now. The endpoint keeps the answers (domains/edge/cache.py) until the
edge version says a row changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from domains.choices import State
from domains.dns import hostnames
from domains.models import Certificate
from domains.pki import sealing
from domains.querysets import CertificateQuerySet


@dataclass(frozen=True)
class Answer:
    """What the endpoint answers for a name: the chain and key in clear (200), or None (204:
    no live domain has it)."""

    bundle: bytes | None
    # When the clock alone makes this answer wrong: the certificate's notAfter.
    expires: datetime | None = None


NO_CERTIFICATE = Answer(None)


def live_certificates() -> CertificateQuerySet:
    """The certificates the edge may serve: valid now, of a live domain. Each name's is the
    first of them in `served()`'s order."""
    return Certificate.objects.served().filter(domain__state=State.ACTIVE)


def served_certificate(server_name: str) -> Certificate | None:
    """The certificate to present for `server_name`, or None: no such live domain."""
    # SNI carries the ASCII (A-label) form, as domains are stored; a trailing dot is the
    # same name.
    hostname = hostnames.comparable(server_name)
    if not hostname:
        return None
    return (
        live_certificates()
        .filter(domain__hostname=hostname)
        .only("pem", "key_pem", "not_after")
        .first()
    )


def pem_bundle(certificate: Certificate) -> bytes:
    """The chain (leaf first) and the private key, in clear, as Caddy reads them."""
    return (certificate.pem.rstrip("\n") + "\n" + sealing.unseal(certificate.key_pem)).encode()


def look_up(server_name: str) -> Answer:
    """The endpoint's answer for `server_name` from the database: one query, and one
    decryption when a certificate is served. The endpoint's only database read of a
    certificate, made when its cache has no answer for the name."""
    certificate = served_certificate(server_name)
    if certificate is None:
        return NO_CERTIFICATE
    return Answer(pem_bundle(certificate), certificate.not_after)
