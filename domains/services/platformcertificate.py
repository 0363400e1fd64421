"""The platform's own certificate: `*.PLATFORM_DOMAIN` and `PLATFORM_DOMAIN`, the one that
serves every project's default address, issued and renewed over DNS-01 (domains/pki/dns01.py)
by the certificates worker (domains/tasks.py `renew_platform_certificate`, hourly).

It is a PlatformKey row (PLATFORM_CERTIFICATE): its key sealed like every private key, its
chain beside it, so every edge on any host reads the same one. It is renewed two thirds into
its validity (no jitter: one certificate, asked about by one hourly task), from the CAs of
DOMAINS_ACME_DIRECTORIES in order, moving on when one fails for a reason of its own
(`pki.Unavailable`) as a domain's order does (domains/services/fallback.py): a CA resting
after a rate limit is not asked, each skip and the issue are counted, and the operator reads
the CA's words in the log. Nothing is done when the operator serves their own
(EDGE_PLATFORM_CERTIFICATE, which stays the override) or DNS-01 is off (DOMAINS_DNS01_SERVER).
"""

from __future__ import annotations

import logging
from datetime import datetime

from cryptography import x509
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from domains import metrics
from domains.choices import PlatformKeyUse
from domains.dns.rfc2136 import Rfc2136
from domains.models import PlatformKey
from domains.pki import cas, dns01, sealing
from domains.pki.authority import Issued, Unavailable
from domains.services import fallback

log = logging.getLogger(__name__)


def platform_certificate_names() -> list[str]:
    return [f"*.{settings.PLATFORM_DOMAIN}", settings.PLATFORM_DOMAIN]


def platform_certificate() -> PlatformKey | None:
    return PlatformKey.objects.filter(use=PlatformKeyUse.PLATFORM_CERTIFICATE).first()


def renewal_due(row: PlatformKey, now: datetime) -> bool:
    leaf = x509.load_pem_x509_certificates(row.certificate_pem.encode())[0]
    validity = leaf.not_valid_after_utc - leaf.not_valid_before_utc
    return now >= leaf.not_valid_before_utc + validity * 2 / 3


def platform_certificate_renew(*, now: datetime | None = None) -> Issued | None:
    """The platform's certificate issued, or renewed when it is due: what was issued, or None
    when nothing was to do. A CA's own failure on the last CA, a provider's refusal or a zone
    whose servers lag raise, for the next hourly run to try again."""
    if settings.EDGE_PLATFORM_CERTIFICATE or not settings.DOMAINS_DNS01_SERVER:
        return None
    current = platform_certificate()
    if current is not None and not renewal_due(current, now or timezone.now()):
        return None
    provider = Rfc2136.from_settings()
    authorities = cas.configured()
    for position, ca in enumerate(authorities):
        try:
            fallback.not_resting(ca.directory)
            issued = dns01.issue(platform_certificate_names(), ca=ca, provider=provider)
        except Unavailable as failure:
            fallback.rest(ca.directory, failure)
            if position == len(authorities) - 1:
                raise
            metrics.acme_skipped(ca.directory, failure.reason)
            log.warning("%s did not issue the platform's certificate: %s", ca.label, failure)
            continue
        with transaction.atomic():
            PlatformKey.objects.update_or_create(
                use=PlatformKeyUse.PLATFORM_CERTIFICATE,
                defaults={"key_pem": sealing.seal(issued.key_pem), "certificate_pem": issued.pem},
            )
            metrics.acme_issued(ca.directory, fallback=position > 0)
        return issued
    raise LookupError("no certificate authority configured for the platform's certificate")
