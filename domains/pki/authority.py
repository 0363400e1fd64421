"""What every certificate authority offers the platform, whichever it is.

`prepare` does what comes before signing and may take a while (an ACME order's
challenges); it runs outside any row lock and is safe to repeat. `issue` signs
or collects the certificate; the caller holds the domain's row lock, so two
runs never both store one. Both raise `Pending` when the CA is not done yet
(retry after `retry_after` seconds) and `Refused` when it will not issue.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from cryptography import x509
from cryptography.x509.oid import NameOID

from domains.retry import RetryLater

if TYPE_CHECKING:
    from domains.models import Domain


@dataclass(frozen=True)
class Issued:
    serial: str
    not_before: datetime
    not_after: datetime
    san: str
    # The leaf first, then any intermediates the CA sent.
    pem: str
    # In clear: the caller seals it before storing (domains/pki/keys.py).
    key_pem: str
    issuer: str


class Pending(RetryLater):
    """The CA has not finished: ask again in `retry_after` seconds (its Retry-After)."""

    def __init__(self, message: str, *, retry_after: float):
        super().__init__(message, retry_after=retry_after)


class Refused(Exception):
    """The CA will not issue; the message says why in plain words, quoting the CA
    ("The CA refused the order: ..."), and is shown to the owner as it is."""


class Authority(Protocol):
    def caa_identity(self) -> str:
        """The issuer domain a CAA `issue` property must name to allow this CA."""
        ...

    def prepare(self, domain: Domain) -> None: ...

    def issue(self, domain: Domain) -> Issued: ...


def common_name(name: x509.Name) -> str:
    names = name.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(names[0].value) if names else name.rfc4514_string()


def issued_from_pem(chain_pem: str, key_pem: str) -> Issued:
    """What the platform stores of a certificate chain (leaf first) and its key."""
    leaf = x509.load_pem_x509_certificates(chain_pem.encode())[0]
    try:
        san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names = san.get_values_for_type(x509.DNSName)
    except x509.ExtensionNotFound:
        names = []
    return Issued(
        serial=format(leaf.serial_number, "x"),
        not_before=leaf.not_valid_before_utc,
        not_after=leaf.not_valid_after_utc,
        san=",".join(names) or common_name(leaf.subject),
        pem=chain_pem,
        key_pem=key_pem,
        issuer=common_name(leaf.issuer),
    )
