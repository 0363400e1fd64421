"""What every certificate authority offers the platform, whichever it is.

`prepare` does what comes before signing and may take a while (an ACME order's
challenges); `issue` signs or collects the certificate (an ACME order finalized and
polled). Both are called outside any database transaction and hold no lock while they
wait for the CA, and both are safe to repeat: a run that dies before the certificate is
stored leaves what the next run resumes. Both raise `Pending` when the CA is not done yet
(retry after `retry_after` seconds) and `Refused` when it will not issue. `stored` is
called in the short transaction that stores the certificate, under the domain's row lock,
to forget the work that got it (no network there).

Whatever a CA returns passes `issued_from_pem`, which takes only the certificate
that was ordered: its one name the domain's, its public key the order's, valid
now. A CA that answers with another (a hostile or broken directory) is `Refused`
with what it returned, and nothing is stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import NameOID
from django.utils.translation import gettext_noop

from domains.retry import RetryLater
from petstore.sentences import Sentence

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
    # In clear: the caller seals it before storing (domains/pki/sealing.py).
    key_pem: str
    issuer: str


class Pending(RetryLater):
    """The CA has not finished: ask again in `retry_after` seconds (its Retry-After)."""

    def __init__(self, message: str, *, retry_after: float):
        super().__init__(message, retry_after=retry_after)


class Unavailable(Pending):
    """The CA did not issue for a reason of its own, never the owner's: it limits our rate,
    answered with a server error, could not be reached, or did not finish within
    DOMAINS_ACME_WAIT (`reason`, a domains.choices.CaSkipReason). The next CA in order is
    asked (domains/services/certificates.py); after the last, it is `Pending` like any."""

    def __init__(self, message: str, *, reason: str, retry_after: float):
        super().__init__(message, retry_after=retry_after)
        self.reason = reason


class NotReached(RetryLater):
    """The CA could not fetch a challenge from us: our edge or web processes were down
    (connection refused, reset, timed out) or answered it with a 5xx. Our outage, not the
    owner's: retried with the backoff until it passes (or the owner's DNS check fails),
    never left for a Re-verify. `said` says what happened, the CA's words quoted in it; the
    message is its English."""

    def __init__(self, said: Sentence):
        super().__init__(said.english())
        self.said = said


class Refused(Exception):
    """No certificate: the CA will not issue, or what it answered is refused. `said` says why
    in plain words, quoting the CA ("The CA refused the order: ...", "The CA returned a
    certificate for ...; refused."), and is shown to the owner in their language, the CA's
    words as it gave them; the message is its English."""

    def __init__(self, said: Sentence):
        super().__init__(said.english())
        self.said = said


@dataclass(frozen=True)
class RenewalInfo:
    """What a CA says, asked again, of when to renew a certificate it issued: a point in the
    window it suggests (None: it suggests none), and when to ask again (None: never)."""

    renew_at: datetime | None
    ask_again_at: datetime | None


class Authority(Protocol):
    # Which CA this is, stored with each certificate it issues (`Certificate.ca`): an ACME
    # CA's directory URL; empty for the local CA.
    name: str

    @property
    def label(self) -> str | Sentence:
        """How the owner reads it: an ACME CA's directory host; the local CA's own words,
        read in the owner's language."""
        ...

    def caa_identities(self) -> tuple[str, ...]:
        """The issuer domains a CAA `issue` property names to allow this CA (any one)."""
        ...

    def prepare(self, domain: Domain) -> None: ...

    def issue(self, domain: Domain) -> Issued: ...

    def stored(self, domain: Domain) -> None: ...

    def abandon(self, domain: Domain) -> None:
        """Forget the work under way for `domain` at this CA: the next CA is asked instead."""
        ...

    def renew_after(self, issued: Issued) -> datetime:
        """When to renew `issued`: in the window the CA suggests, if it suggests one (asked
        outside any transaction), else domains.policy.renewal_time."""
        ...

    def renewal_information(self, pems: Sequence[str]) -> list[RenewalInfo | Exception]:
        """The CA's renewal window of each certificate, asked again (outside any
        transaction); a certificate whose window could not be read has the error."""
        ...


def common_name(name: x509.Name) -> str:
    names = name.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(names[0].value) if names else name.rfc4514_string()


def shown(text: str, *, limit: int = 200) -> str:
    """What a CA sent, fit to quote in a message the owner reads and the logs keep: printable
    ASCII as it is, anything else escaped, and never longer than `limit`."""
    if not (text.isascii() and text.isprintable()):
        text = ascii(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dns_names(leaf: x509.Certificate) -> list[str]:
    try:
        san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return san.get_values_for_type(x509.DNSName)


def check_leaf(
    leaf: x509.Certificate,
    *,
    hostname: str,
    key_pem: str,
    now: datetime,
    also: Sequence[str] = (),
) -> None:
    """Refused unless `leaf` is the certificate that was ordered: its dNSNames exactly
    `hostname` (and `also`, in any order), its public key the one of `key_pem` (the order's,
    the CSR's), valid at `now`."""
    names = dns_names(leaf)
    wanted = [hostname, *also]
    if sorted(name.lower() for name in names) != sorted(name.lower() for name in wanted):
        raise Refused(_returned_for(names, ", ".join(wanted)))
    key = serialization.load_pem_private_key(key_pem.encode(), password=None)
    if leaf.public_key() != key.public_key():
        raise Refused(
            Sentence(
                gettext_noop(
                    "The CA returned a certificate for %(hostname)s with another public key "
                    "than the order's; refused."
                ),
                {"hostname": hostname},
            )
        )
    if now < leaf.not_valid_before_utc:
        raise Refused(
            Sentence(
                gettext_noop(
                    "The CA returned a certificate for %(hostname)s that is valid only from "
                    "%(when)s UTC; refused."
                ),
                {"hostname": hostname, "when": f"{leaf.not_valid_before_utc:%Y-%m-%d %H:%M}"},
            )
        )
    if now >= leaf.not_valid_after_utc:
        raise Refused(
            Sentence(
                gettext_noop(
                    "The CA returned a certificate for %(hostname)s that expired on %(when)s "
                    "UTC; refused."
                ),
                {"hostname": hostname, "when": f"{leaf.not_valid_after_utc:%Y-%m-%d %H:%M}"},
            )
        )


def _returned_for(names: list[str], hostname: str) -> Sentence:
    """The refusal of a certificate for other names than `hostname` (the first three, quoted)."""
    returned = ", ".join(shown(name) for name in names[:3])
    values: dict[str, str | int] = {"returned": returned, "hostname": hostname}
    if not names:
        msgid = gettext_noop(
            "The CA returned a certificate for no DNS name, not %(hostname)s; refused."
        )
    elif len(names) > 3:
        values["more"] = len(names) - 3
        msgid = gettext_noop(
            "The CA returned a certificate for %(returned)s and %(more)d more, not "
            "%(hostname)s; refused."
        )
    else:
        msgid = gettext_noop(
            "The CA returned a certificate for %(returned)s, not %(hostname)s; refused."
        )
    return Sentence(msgid, values)


def issued_from_pem(
    chain_pem: str,
    key_pem: str,
    *,
    hostname: str,
    now: datetime | None = None,
    also: Sequence[str] = (),
) -> Issued:
    """What the platform stores of a certificate chain (leaf first) and its key, once the leaf
    is the certificate ordered for `hostname` (and `also`) with that key (`check_leaf`), else
    `Refused`."""
    try:
        leaf = x509.load_pem_x509_certificates(chain_pem.encode())[0]
    except (ValueError, IndexError):
        raise Refused(
            Sentence(gettext_noop("The CA returned no certificate that could be read; refused."))
        ) from None
    check_leaf(leaf, hostname=hostname, key_pem=key_pem, now=now or datetime.now(UTC), also=also)
    return Issued(
        serial=format(leaf.serial_number, "x"),
        not_before=leaf.not_valid_before_utc,
        not_after=leaf.not_valid_after_utc,
        san=hostname,
        pem=chain_pem,
        key_pem=key_pem,
        issuer=common_name(leaf.issuer),
    )
