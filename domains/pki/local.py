"""The platform's own local certificate authority, and issuing with it (`cryptography`).

The CA's key (sealed) and certificate are a row (PlatformKey, domains/pki/platformkeys.py),
created on first use by whichever process comes first; DOMAINS_CA_DIR holds only a copy of
the certificate, for clients to trust. It signs at once: `prepare` has nothing to do.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from django.conf import settings
from django.utils.translation import gettext_noop

from domains.choices import PlatformKeyUse
from domains.pki import files, sealing
from domains.pki.authority import Issued, RenewalInfo, issued_from_pem
from domains.pki.platformkeys import held
from domains.policy import renewal_time
from petstore.sentences import Sentence

if TYPE_CHECKING:
    from domains.models import Domain

CA_VALIDITY = timedelta(days=3650)
# The copy of the CA's certificate under DOMAINS_CA_DIR (public: what clients trust).
CERT_FILE = "ca-cert.pem"


def _key_usage(*, signs_certificates: bool) -> x509.KeyUsage:
    """Digital signature always; certificate and CRL signing only for the CA."""
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=signs_certificates,
        crl_sign=signs_certificates,
        encipher_only=False,
        decipher_only=False,
    )


def new_ca() -> tuple[str, str]:
    """A new CA: its key, sealed, and its certificate, both PEM."""
    key = sealing.new_key()
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Petstore platform"),
            x509.NameAttribute(NameOID.COMMON_NAME, f"{settings.DOMAINS_CA_IDENTIFIER} local CA"),
        ]
    )
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + CA_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(signs_certificates=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    # Sealed, like every private key the platform keeps.
    return sealing.seal(sealing.pem(key)), cert.public_bytes(serialization.Encoding.PEM).decode()


def load_or_create_ca() -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    stored = held(PlatformKeyUse.LOCAL_CA, new_ca)
    key = serialization.load_pem_private_key(sealing.unseal(stored.key_pem).encode(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise TypeError("the local CA's stored key is not an EC private key")
    copy_certificate(stored.certificate_pem)
    return key, x509.load_pem_x509_certificate(stored.certificate_pem.encode())


def root_certificate_path() -> Path:
    """The local CA's certificate, copied under DOMAINS_CA_DIR: what a client trusts to
    verify the edge under `make run`. The CA is created (with its sealed key) if need be,
    but its key is not opened: the certificate needs no DOMAINS_KEY_ENCRYPTION_KEY once the
    CA exists."""
    return copy_certificate(held(PlatformKeyUse.LOCAL_CA, new_ca).certificate_pem)


def copy_certificate(certificate_pem: str) -> Path:
    """The CA's certificate written under DOMAINS_CA_DIR (CERT_FILE) for clients to trust,
    again whenever the stored one differs (a new database); a copy, nothing to keep."""
    path = files.directory() / CERT_FILE
    certificate = certificate_pem.encode()
    if not path.is_file() or path.read_bytes() != certificate:
        files.write_atomically(path, certificate, 0o644)
    return path


def issue(hostname: str, *, now: datetime | None = None) -> Issued:
    """A leaf certificate for `hostname`, valid DOMAINS_CERT_VALIDITY_DAYS, signed by the CA."""
    ca_key, ca_cert = load_or_create_ca()
    key = sealing.new_key()
    now = (now or datetime.now(UTC)).replace(microsecond=0)
    not_after = now + timedelta(days=settings.DOMAINS_CERT_VALIDITY_DAYS)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(not_after)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(signs_certificates=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    # Held to the check every CA's certificate passes, though it made the certificate itself.
    return issued_from_pem(
        cert.public_bytes(serialization.Encoding.PEM).decode(),
        sealing.pem(key),
        hostname=hostname,
        now=now,
    )


class LocalAuthority:
    """The platform's own CA: CAA must allow DOMAINS_CA_IDENTIFIER."""

    name = ""
    label = Sentence(gettext_noop("the platform's own CA"))

    def caa_identities(self) -> tuple[str, ...]:
        return (settings.DOMAINS_CA_IDENTIFIER,)

    def prepare(self, domain: Domain) -> None:
        return None

    def issue(self, domain: Domain) -> Issued:
        return issue(domain.hostname)

    def stored(self, domain: Domain) -> None:
        return None

    def abandon(self, domain: Domain) -> None:
        return None

    def renew_after(self, issued: Issued) -> datetime:
        return renewal_time(issued.not_before, issued.not_after)

    def renewal_information(self, pems: Sequence[str]) -> list[RenewalInfo | Exception]:
        return [RenewalInfo(None, None) for _ in pems]  # it suggests no window, ever
