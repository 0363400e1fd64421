"""The edge's placeholder certificate: what a handshake gets for a name the platform has no
certificate for (no such domain, not verified yet, its certificate not issued yet, removed).

Without it Caddy ends such a handshake with a TLS alert, which curl shows as "tlsv1 alert
internal error" and owners read as "the edge is broken". With it the handshake completes
with a certificate that names no real host (FALLBACK_NAME is under `.invalid`, which never
resolves, RFC 6761), says what it is in its subject, and is signed by nobody a client
trusts: a browser shows its "not private" page, curl says "self-signed certificate", and
whoever goes on anyway gets the web process's plain answer for the name ("No project is
published at …"). It is never another tenant's certificate, and holds nothing secret:
each endpoint process makes its own key in memory, never stored, and a new certificate
each day, so it never shows as expired.
"""

from __future__ import annotations

import functools
from datetime import UTC, date, datetime, time, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

FALLBACK_NAME = "no-certificate.invalid"
FALLBACK_SUBJECT = x509.Name(
    [
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Petstore edge"),
        x509.NameAttribute(NameOID.COMMON_NAME, "No certificate for this name here yet"),
    ]
)


def is_fallback(certificate: x509.Certificate) -> bool:
    """Whether a presented certificate is this placeholder, not a domain's own."""
    return certificate.subject == FALLBACK_SUBJECT


@functools.lru_cache(maxsize=1)
def _made_on(day: date) -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    start = datetime.combine(day, time(), tzinfo=UTC) - timedelta(days=1)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(FALLBACK_SUBJECT)
        .issuer_name(FALLBACK_SUBJECT)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(FALLBACK_NAME)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = certificate.public_bytes(serialization.Encoding.PEM)
    return pem + key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def fallback_bundle() -> bytes:
    """The placeholder's certificate and key in PEM, as the endpoint answers Caddy."""
    return _made_on(datetime.now(UTC).date())
