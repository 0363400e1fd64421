"""DNS-01: the DNS provider the platform writes its `_acme-challenge` TXT records through
(domains/dns/rfc2136.py, RFC 2136 dynamic update signed with TSIG)."""

from __future__ import annotations

import base64

from django.core.exceptions import ImproperlyConfigured

from petstore.env import Section

dns01 = Section("DNS-01")
DOMAINS_DNS01_SERVER = dns01.text(
    "DOMAINS_DNS01_SERVER",
    "",
    "The primary DNS server of the DNS-01 zone, which takes its RFC 2136 updates: `host` or "
    "`host:port` (an address); empty: DNS-01 is off.",
)
DOMAINS_DNS01_ZONE = dns01.text(
    "DOMAINS_DNS01_ZONE",
    "",
    "The zone the platform writes its `_acme-challenge` TXT records in (PLATFORM_DOMAIN's).",
)
DOMAINS_DNS01_TSIG_KEY_NAME = dns01.text(
    "DOMAINS_DNS01_TSIG_KEY_NAME",
    "",
    "The name of the TSIG key that signs the updates, as the DNS server knows it.",
)
DOMAINS_DNS01_TSIG_ALGORITHM = dns01.text(
    "DOMAINS_DNS01_TSIG_ALGORITHM",
    "hmac-sha256",
    "The TSIG key's algorithm (`hmac-sha256`, `hmac-sha512`, ...).",
)
DOMAINS_DNS01_TSIG_SECRET = dns01.text(
    "DOMAINS_DNS01_TSIG_SECRET",
    "",
    "The TSIG key's secret, in base64 as the DNS server's configuration holds it.",
    secret=True,
).strip()
DNS01_NEEDS = {
    "DOMAINS_DNS01_ZONE": DOMAINS_DNS01_ZONE,
    "DOMAINS_DNS01_TSIG_KEY_NAME": DOMAINS_DNS01_TSIG_KEY_NAME,
    "DOMAINS_DNS01_TSIG_SECRET": DOMAINS_DNS01_TSIG_SECRET,
}
if DOMAINS_DNS01_SERVER and (missing := [name for name, value in DNS01_NEEDS.items() if not value]):
    raise ImproperlyConfigured(f"DOMAINS_DNS01_SERVER is set: set {', '.join(missing)} too")
try:
    base64.b64decode(DOMAINS_DNS01_TSIG_SECRET, validate=True)
except ValueError:
    # Never repeated: it is a secret.
    raise ImproperlyConfigured(
        "DOMAINS_DNS01_TSIG_SECRET must be the TSIG key's secret in base64, as the DNS server's "
        "configuration holds it"
    ) from None
DOMAINS_DNS01_WAIT = dns01.number(
    "DOMAINS_DNS01_WAIT",
    60.0,
    "Seconds DNS-01 waits for every authoritative server of the zone to serve a challenge's "
    "TXT record before it gives up (and cleans the record up).",
)
