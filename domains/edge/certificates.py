"""Which certificate the edge serves for a name a client sent in its TLS handshake (SNI).

The same rule as serving over HTTP (domains/routing/resolver.py): a live domain
whose certificate is issued (`active`) and currently valid, read from the rows
as they are now; the name itself, else the live wildcard one label above it
(`*.shop.example.com` for `a.shop.example.com`). The exact name always wins: another
project's more specific domain is served with its own certificate, never the wildcard, and
a name another project proved is never the wildcard's.
Else, for PLATFORM_DOMAIN and the names one label under it (a project's default
address), the platform's own wildcard certificate, issued over DNS-01 (its
PlatformKey row), unless the operator serves their own (EDGE_PLATFORM_CERTIFICATE, which
Caddy loads and answers with before it asks). The endpoint keeps the answers
(domains/edge/cache.py) until the edge version says a row changed, the platform's too: a
renewed platform certificate is served without an edge restart.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from cryptography import x509
from django.conf import settings
from django.db.models import Case, Exists, OuterRef, Q, Value, When

from domains.choices import PlatformKeyUse, State
from domains.dns import hostnames
from domains.models import Certificate, PlatformKey, ProvenHostname
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
    wildcard = hostnames.covering_wildcard(hostname)
    names = [hostname] if wildcard is None else [hostname, wildcard]
    # One query: the exact name's certificate first, the wildcard's only when it has none,
    # and never over a name another project proved (its claim may be gone; the name is not
    # the wildcard owner's to take).
    exact_first = Case(When(domain__hostname=hostname, then=Value(0)), default=Value(1))
    proven_by_another = ProvenHostname.objects.filter(hostname=hostname).exclude(
        project_id=OuterRef("domain__project_id")
    )
    return (
        live_certificates()
        .filter(domain__hostname__in=names)
        .exclude(Q(domain__hostname=wildcard) & Exists(proven_by_another))
        .order_by(exact_first, "-not_after", "-pk")
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
        return platform_answer(server_name)
    return Answer(pem_bundle(certificate), certificate.not_after)


def platform_name(hostname: str) -> bool:
    """Whether the platform's wildcard certificate covers `hostname`: PLATFORM_DOMAIN itself or
    one label under it (a wildcard covers one label, RFC 6125 §6.4.3)."""
    platform = hostnames.comparable(settings.PLATFORM_DOMAIN)
    label = hostname.removesuffix(f".{platform}")
    return hostname == platform or (label != hostname and bool(label) and "." not in label)


def platform_answer(server_name: str) -> Answer:
    """The platform's own certificate, for its names, when it has one and the operator does
    not serve theirs."""
    hostname = hostnames.comparable(server_name)
    if settings.EDGE_PLATFORM_CERTIFICATE or not hostname or not platform_name(hostname):
        return NO_CERTIFICATE
    row = PlatformKey.objects.filter(use=PlatformKeyUse.PLATFORM_CERTIFICATE).first()
    if row is None:
        return NO_CERTIFICATE
    leaf = x509.load_pem_x509_certificates(row.certificate_pem.encode())[0]
    bundle = row.certificate_pem.rstrip("\n") + "\n" + sealing.unseal(row.key_pem)
    return Answer(bundle.encode(), leaf.not_valid_after_utc)
