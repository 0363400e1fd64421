"""Certificate authorities behind one interface (domains/pki/authority.py), chosen by
DOMAINS_CA: `local` (domains/pki/local.py, the platform's own CA) or `acme`
(domains/pki/acme.py, the RFC 8555 CAs of DOMAINS_ACME_DIRECTORIES, asked in order).
Private keys at rest: domains/pki/sealing.py.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings

from domains.pki.acme import AcmeAuthority
from domains.pki.authority import (
    Authority,
    Issued,
    NotReached,
    Pending,
    Refused,
    RenewalInfo,
    Unavailable,
)
from domains.pki.cas import configured
from domains.pki.local import LocalAuthority, load_or_create_ca, root_certificate_path

__all__ = [
    "Authority",
    "Issued",
    "NotReached",
    "Pending",
    "Refused",
    "RenewalInfo",
    "Unavailable",
    "authorities",
    "authority",
    "load_or_create_ca",
    "root_certificate_path",
]


def authorities(prefer: Sequence[str] = ()) -> list[Authority]:
    """The CAs to ask, in order: those named in `prefer` (by `Authority.name`: the CA an
    order is under way at, the CA that issued the certificate being renewed; empty means
    the first configured), then the rest in the order of DOMAINS_ACME_DIRECTORIES."""
    if settings.DOMAINS_CA == "local":
        return [LocalAuthority()]
    found: list[Authority] = [AcmeAuthority(ca) for ca in configured()]
    first = [name or found[0].name for name in prefer]

    def rank(each: Authority) -> int:
        return first.index(each.name) if each.name in first else len(first)

    return sorted(found, key=rank)


def authority() -> Authority:
    """The first CA of DOMAINS_CA (of DOMAINS_ACME_DIRECTORIES for `acme`)."""
    return authorities()[0]
