"""Certificate authorities behind one interface (domains/pki/authority.py), chosen by
DOMAINS_CA: `local` (domains/pki/local.py, the platform's own CA) or `acme`
(domains/pki/acme.py, any RFC 8555 CA). Private keys at rest: domains/pki/sealing.py.
"""

from __future__ import annotations

from django.conf import settings

from domains.pki.acme import AcmeAuthority
from domains.pki.authority import Authority, Issued, NotReached, Pending, Refused, RenewalInfo
from domains.pki.local import LocalAuthority, load_or_create_ca, root_certificate_path

__all__ = [
    "Authority",
    "Issued",
    "NotReached",
    "Pending",
    "Refused",
    "RenewalInfo",
    "authority",
    "load_or_create_ca",
    "root_certificate_path",
]

AUTHORITIES: dict[str, type[Authority]] = {"local": LocalAuthority, "acme": AcmeAuthority}


def authority() -> Authority:
    return AUTHORITIES[settings.DOMAINS_CA]()
