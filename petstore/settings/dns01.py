"""DNS-01: the DNS provider the platform writes its `_acme-challenge` TXT records through
(domains/dns/rfc2136.py, RFC 2136 dynamic update signed with TSIG)."""

from __future__ import annotations

import base64

from django.core.exceptions import ImproperlyConfigured

from petstore.env import Section, raw_value
from petstore.settings.core import DEBUG
from petstore.settings.domains import DOMAINS_CA, DOMAINS_DEV_DNS_PORT, PLATFORM_DOMAIN

dns01 = Section("DNS-01")
DOMAINS_DNS01_SERVER = dns01.text(
    "DOMAINS_DNS01_SERVER",
    "",
    "The primary DNS server of the DNS-01 zone, which takes its RFC 2136 updates: `host` or "
    "`host:port` (an address); empty: DNS-01 is off.",
    shown="empty (DEBUG, with DOMAINS_CA=acme and a TSIG secret: the development DNS server)",
)
DOMAINS_DNS01_ZONE = dns01.text(
    "DOMAINS_DNS01_ZONE",
    PLATFORM_DOMAIN if DEBUG else "",
    "The zone the platform writes its `_acme-challenge` TXT records in (PLATFORM_DOMAIN's).",
    shown="empty (DEBUG: PLATFORM_DOMAIN)",
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
# Under DEBUG with an ACME CA (`make run` pointed at a Pebble), DNS-01 is on by itself: the
# development DNS server takes the updates (devtools/dnsupdates.py), signed with the key
# `make run` wrote into this checkout's settings file (devtools/localenv.py). Not with the
# local CA, `make run`'s, which signs a wildcard without DNS-01: on, DNS-01 would send the
# hourly platform certificate to DOMAINS_ACME_DIRECTORIES' CA, Let's Encrypt's by default.
if (
    DEBUG
    and DOMAINS_CA == "acme"
    and DOMAINS_DNS01_TSIG_SECRET
    and raw_value("DOMAINS_DNS01_SERVER") is None
):
    DOMAINS_DNS01_SERVER = f"127.0.0.1:{DOMAINS_DEV_DNS_PORT}"
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
    # The development DNS server serves an update at once: a wait that ends is a mistake.
    10.0 if DEBUG else 60.0,
    "Seconds DNS-01 waits for every authoritative server of the zone to serve a challenge's "
    "TXT record before it gives up (and cleans the record up).",
    shown="`60` (DEBUG: `10`)",
)
