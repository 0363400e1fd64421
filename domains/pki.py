"""The platform's own local certificate authority, and issuing with it (`cryptography`).

The CA key and certificate live under DOMAINS_CA_DIR and are created on first
use. Creation is race-safe across processes (web, several workers): an
exclusive flock on `ca.lock` serialises creators, files are written to a
temporary name and renamed into place, and whoever finds them already there
loads them instead.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from django.conf import settings

CA_VALIDITY = timedelta(days=3650)
KEY_FILE = "ca-key.pem"
CERT_FILE = "ca-cert.pem"


@dataclass(frozen=True)
class Issued:
    serial: str
    not_before: datetime
    not_after: datetime
    san: str
    pem: str
    key_pem: str


def _write_atomically(path: Path, data: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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


def _create_ca(directory: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
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
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    # Key first: a reader that sees the certificate can always find its key.
    _write_atomically(directory / KEY_FILE, key_pem, 0o600)
    _write_atomically(directory / CERT_FILE, cert.public_bytes(serialization.Encoding.PEM), 0o644)


def load_or_create_ca() -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    directory = Path(settings.DOMAINS_CA_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = directory / CERT_FILE, directory / KEY_FILE
    if not cert_path.exists():
        with open(directory / "ca.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if not cert_path.exists():  # someone may have created it while we waited
                    _create_ca(directory)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
    key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise TypeError(f"{key_path} does not hold an EC private key; remove the CA to recreate it")
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    return key, cert


def issue(hostname: str, *, now: datetime | None = None) -> Issued:
    """A leaf certificate for `hostname`, valid DOMAINS_CERT_VALIDITY_DAYS, signed by the CA."""
    ca_key, ca_cert = load_or_create_ca()
    key = ec.generate_private_key(ec.SECP256R1())
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
    return Issued(
        serial=format(cert.serial_number, "x"),
        not_before=cert.not_valid_before_utc,
        not_after=cert.not_valid_after_utc,
        san=hostname,
        pem=cert.public_bytes(serialization.Encoding.PEM).decode(),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode(),
    )
