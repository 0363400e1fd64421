"""Custom domains: the platform's names, the checks and their DNS, the certificate
authority and the key that seals private keys, the owners' mail and webhooks."""

from __future__ import annotations

import base64
import re
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from petstore.env import Section, email_url, one_each, raw_value
from petstore.ports import MAKE_RUN_HTTPS_PORT
from petstore.settings.core import DEBUG, PORT, VAR_DIR

env = Section("Domains")
PLATFORM_DOMAIN = env.text(
    "PLATFORM_DOMAIN",
    "petstore.localhost",
    "Projects are published at `<slug>.<PLATFORM_DOMAIN>`: a registrable domain of its own, "
    "apart from `DASHBOARD_HOST`'s.",
    example="petstore-sites.example",
)
PLATFORM_CNAME_TARGET = env.text(
    "PLATFORM_CNAME_TARGET",
    f"domains.{PLATFORM_DOMAIN}",
    "The CNAME value owners must set.",
    shown="`domains.<PLATFORM_DOMAIN>`",
)
# Tenant pages are served under PLATFORM_DOMAIN, which must be a registrable domain of its
# own (a system check warns).
DASHBOARD_HOST = env.text(
    "DASHBOARD_HOST",
    "localhost",
    "The host the dashboard, the admin and the API answer on; never claimable.",
    example="app.petstore.example",
)
# The ports redirects name (never the one a Host header claims); 80 and 443 are left out.
HTTP_PORT = env.integer(
    "HTTP_PORT",
    PORT if DEBUG else 80,
    "The plain-HTTP port the edge listens on and redirects name.",
    shown="`80` (DEBUG: `PORT`)",
    example="80",
)
HTTPS_PORT = env.integer(
    "HTTPS_PORT",
    443,
    "The HTTPS port the edge listens on and redirects name.",
    shown=f"`443` (`make run`: `{MAKE_RUN_HTTPS_PORT}`)",
    example="443",
)
DOMAINS_DEV_DNS_PORT = env.integer(
    "DOMAINS_DEV_DNS_PORT", 5353, "The loopback development DNS server's port (`make run`)."
)
DOMAINS_DEV_DNS_ZONES = Path(
    env.text(
        "DOMAINS_DEV_DNS_ZONES",
        str(VAR_DIR / "dns-zones"),
        "The development DNS server's zone files.",
        shown="`var/dns-zones`",
    )
)
DOMAINS_DNS_NAMESERVERS = env.list(
    "DOMAINS_DNS_NAMESERVERS",
    f"127.0.0.1:{DOMAINS_DEV_DNS_PORT}" if DEBUG else "",
    "Comma-separated `host:port` resolvers for the checks; empty: the system's.",
    shown="the system's (DEBUG: the development DNS server)",
)
DOMAINS_DNS_TIMEOUT = env.number(
    "DOMAINS_DNS_TIMEOUT", 2.0, "Seconds one resolver may take to answer."
)
DOMAINS_DNS_LIFETIME = env.number("DOMAINS_DNS_LIFETIME", 5.0, "Seconds one question may take.")
# The domain doctor (domains/dns/doctor.py) asks a zone's own name servers each directly.
DOMAINS_DNS_AUTHORITATIVE_PORT = env.integer(
    "DOMAINS_DNS_AUTHORITATIVE_PORT",
    DOMAINS_DEV_DNS_PORT if DEBUG else 53,
    "The port a zone's own name servers are asked on (the domain page's What the DNS says).",
    shown="`53` (DEBUG: `DOMAINS_DEV_DNS_PORT`)",
)
# Where the platform reaches on a tenant's say (a webhook's address, a zone's name server
# the domain doctor asks: domains/outbound.py). Empty in production: only public addresses.
OUTBOUND_ALLOWED_NETWORKS = env.networks(
    "OUTBOUND_ALLOWED_NETWORKS",
    "127.0.0.0/8,::1" if DEBUG else "",
    "Networks the platform may reach on a tenant's say although they are not public "
    "(webhook receivers, the name servers the domain doctor asks); empty: public addresses only.",
    shown="empty (DEBUG: `127.0.0.0/8,::1`, where `make run`'s DNS servers and receivers listen)",
)
# Every special-use name and suffix outside the Public Suffix List's ICANN section is
# refused unless listed here (domains/dns/hostnames.py).
DOMAINS_LOCAL_SUFFIXES = env.list(
    "DOMAINS_LOCAL_SUFFIXES",
    "test,localhost" if DEBUG else "",
    "Name suffixes outside the public DNS that tenants' names (Add domain, a webhook's host, a "
    "zone's name servers) may end in all the same, where the platform serves the zone itself.",
    shown="empty (DEBUG: `test,localhost`)",
)
DOMAINS_CA_IDENTIFIER = env.text(
    "DOMAINS_CA_IDENTIFIER",
    "ca.petstore.localhost",
    "The CA name CAA records must allow (`acme`: e.g. `letsencrypt.org`).",
    example="letsencrypt.org",
)
DOMAINS_CERT_ISSUE_DELAY = env.number(
    "DOMAINS_CERT_ISSUE_DELAY", 5.0, "Seconds of simulated latency of the local CA."
)
DOMAINS_VERIFY_WINDOW = env.integer(
    "DOMAINS_VERIFY_WINDOW", 48, "Hours a pending domain is checked before it fails."
)
DOMAINS_CA_DIR = Path(
    env.text(
        "DOMAINS_CA_DIR",
        str(VAR_DIR / "ca"),
        "Where a copy of the local CA's certificate is written, for clients to trust.",
        shown="`var/ca`",
    )
)
DOMAINS_RECHECK_INTERVAL = env.integer(
    "DOMAINS_RECHECK_INTERVAL", 6, "Hours between two checks of a verified domain."
)
DOMAINS_CERT_VALIDITY_DAYS = env.integer(
    "DOMAINS_CERT_VALIDITY_DAYS", 90, "The local CA's certificate lifetime, in days."
)
DOMAINS_GRACE_HOURS = env.integer(
    "DOMAINS_GRACE_HOURS",
    48,
    "Hours a live domain whose checks fail is still served, from its first failed check.",
)
DOMAINS_TEMPORARY_FAILURE_LIMIT = env.integer(
    "DOMAINS_TEMPORARY_FAILURE_LIMIT",
    72,
    "Hours a live domain's checks may fail only temporarily (SERVFAIL, timeout) before its "
    "grace period starts.",
)
DOMAINS_CLAIM_EXPIRY_DAYS = env.integer(
    "DOMAINS_CLAIM_EXPIRY_DAYS", 7, "Days after which a claim that never verified is dropped."
)
DOMAINS_VERIFY_COOLDOWN = env.integer(
    "DOMAINS_VERIFY_COOLDOWN", 5, "Seconds between two Verify / Re-verify of one domain."
)
# Not retried on a timeout (the sweep's backoff checks again): a name server that never
# answers holds a worker this long, no longer. A healthy answer takes milliseconds; 3 s
# leaves room for a resolver's slow first answer.
DOMAINS_VERIFY_DEADLINE = env.number(
    "DOMAINS_VERIFY_DEADLINE",
    3.0,
    "Seconds a Verify / Re-verify's check may wait for the DNS in all; a timeout is a "
    "temporary failure, checked again by the sweep.",
)
DOMAINS_ADD_PER_HOUR = env.integer(
    "DOMAINS_ADD_PER_HOUR", 100, "Add domain per project per hour (staff commands: no limit)."
)
DOMAINS_VERIFY_PER_HOUR = env.integer(
    "DOMAINS_VERIFY_PER_HOUR",
    60,
    "Verify / Re-verify per project per hour (staff commands: no limit).",
)
DOMAINS_READD_COOLDOWN = env.integer(
    "DOMAINS_READD_COOLDOWN",
    0 if DEBUG else 3600,
    "Seconds before a project may add again a name it removed; 0: off.",
    shown="`3600` (DEBUG: `0`)",
)
# Its lease on a claimed check, and the time after which certificate work counts as lost,
# are counted in sweeps (domains/policy.py: SWEEPS_BEFORE_AGAIN).
DOMAINS_SWEEP_INTERVAL = env.number(
    "DOMAINS_SWEEP_INTERVAL",
    60.0,
    "Seconds between two sweeps, which queue due checks and lost certificate work.",
)

# --- Certificates -------------------------------------------------------------

certificates = Section("Certificates")
DOMAINS_CA = certificates.text(
    "DOMAINS_CA",
    "local",
    "Which CA issues: `local` (the platform's own, under `DOMAINS_CA_DIR`) or `acme` (an "
    "RFC 8555 CA such as Let's Encrypt).",
    example="acme",
)
if DOMAINS_CA not in {"local", "acme"}:
    raise ImproperlyConfigured(f"DOMAINS_CA must be local or acme, not {DOMAINS_CA!r}")
DOMAINS_ACME_DIRECTORIES = certificates.list(
    "DOMAINS_ACME_DIRECTORIES",
    "https://acme-v02.api.letsencrypt.org/directory",
    "The ACME directory URLs, comma-separated, in the order they are asked, with "
    "`DOMAINS_CA=acme`: the next is asked only when the one before refuses for a reason of "
    "its own (rate limited, a server error, unreachable, slow).",
    example="https://acme-v02.api.letsencrypt.org/directory",
)
if not DOMAINS_ACME_DIRECTORIES:
    raise ImproperlyConfigured("DOMAINS_ACME_DIRECTORIES must name at least one ACME directory")
if raw_value("DOMAINS_ACME_DIRECTORY"):
    raise ImproperlyConfigured(
        "DOMAINS_ACME_DIRECTORY is now DOMAINS_ACME_DIRECTORIES (a list): rename the variable"
    )


def per_directory(name: str, values: list[str]) -> list[str]:
    """A per-CA setting: one value for each of DOMAINS_ACME_DIRECTORIES (domains/pki/cas.py
    reads it again so, for the directories a test sets)."""
    return one_each(
        name, values, count=len(DOMAINS_ACME_DIRECTORIES), of="DOMAINS_ACME_DIRECTORIES"
    )


DOMAINS_ACME_CAA_IDENTITIES = per_directory(
    "DOMAINS_ACME_CAA_IDENTITIES",
    certificates.list(
        "DOMAINS_ACME_CAA_IDENTITIES",
        "",
        "The issuer domain names a CAA record must name to allow each directory's CA, "
        "comma-separated in the order of `DOMAINS_ACME_DIRECTORIES`, a CA's several names "
        "apart by spaces (`letsencrypt.org,sectigo.com zerossl.com`); empty: "
        "`DOMAINS_CA_IDENTIFIER` for every one.",
        example="letsencrypt.org",
    ),
)
DOMAINS_ACME_EMAIL = certificates.text(
    "DOMAINS_ACME_EMAIL",
    "",
    "The contact address of the platform's ACME accounts.",
    example="ops@petstore.example",
)
DOMAINS_ACME_CA_BUNDLE = per_directory(
    "DOMAINS_ACME_CA_BUNDLE",
    certificates.list(
        "DOMAINS_ACME_CA_BUNDLE",
        "",
        "CA files to trust the ACME directories' HTTPS (a test CA): one for all, or one per "
        "directory in their order (`-`: the system's); empty: the system's.",
    ),
)
DOMAINS_ACME_EAB = per_directory(
    "DOMAINS_ACME_EAB",
    certificates.list(
        "DOMAINS_ACME_EAB",
        "",
        "External account binding for the CAs that need one (ZeroSSL, Google Trust Services): "
        "`key id:HMAC key` (the CA's base64url key) per directory, in their order, `-` for a CA "
        "that needs none.",
        secret=True,
    ),
)
if any(binding and ":" not in binding for binding in DOMAINS_ACME_EAB):
    raise ImproperlyConfigured("DOMAINS_ACME_EAB must be `key id:HMAC key` (or `-`) per directory")
DOMAINS_ACME_WAIT = certificates.number(
    "DOMAINS_ACME_WAIT",
    30.0,
    "Seconds one run waits for a CA to answer, validate or sign before the next CA in "
    "`DOMAINS_ACME_DIRECTORIES` is asked (the last is asked again by the task's retry).",
)
# Only the processes that open or seal keys hold it: the worker and the edge (and
# `resealkeys`), which refuse to start without it (domains/checks.py); the web process never
# needs it.
KEY_ENCRYPTION_KEY_RECIPE = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
KEY_ENCRYPTION_KEY_MIN_BYTES = 32
URLSAFE_BASE64 = re.compile(r"[A-Za-z0-9_-]+")


def encryption_key(name: str, value: str) -> str:
    """`value` when it is at least 32 random bytes in urlsafe base64 (or empty); the error
    never repeats it: it is a secret."""
    stripped = value.rstrip("=")
    try:
        raw = base64.urlsafe_b64decode(stripped + "=" * (-len(stripped) % 4))
    except ValueError:
        raw = b""
    # Bytes repeat in any 32 random ones, but fewer than half of them distinct is a pattern.
    if value and (
        not URLSAFE_BASE64.fullmatch(stripped)
        or len(raw) < KEY_ENCRYPTION_KEY_MIN_BYTES
        or len(set(raw)) < KEY_ENCRYPTION_KEY_MIN_BYTES // 2
    ):
        raise ImproperlyConfigured(
            f"{name} must be at least {KEY_ENCRYPTION_KEY_MIN_BYTES} random bytes in urlsafe "
            f"base64 (one key; older ones go in DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS); make one "
            f"with: {KEY_ENCRYPTION_KEY_RECIPE}"
        )
    return value


DOMAINS_KEY_ENCRYPTION_KEY = encryption_key(
    "DOMAINS_KEY_ENCRYPTION_KEY",
    certificates.text(
        "DOMAINS_KEY_ENCRYPTION_KEY",
        "",
        "Seals private keys at rest (certificates', the local CA's, the ACME account's); "
        "never `SECRET_KEY`. At least 32 random bytes in urlsafe base64: "
        f"`{KEY_ENCRYPTION_KEY_RECIPE}`.",
        shown="required by the worker and the edge; never given to the web processes",
        example="",
        secret=True,
    ).strip(),
)
DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS = [
    encryption_key("DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS", key)
    for key in certificates.list(
        "DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS",
        "",
        "Rotation: the keys `DOMAINS_KEY_ENCRYPTION_KEY` replaced, comma-separated; they "
        "open, never seal, until `manage.py resealkeys` has run.",
        secret=True,
    )
]

# --- The owners' mail -----------------------------------------------------------

mail = Section("Mail")
_email = email_url(
    "EMAIL_URL",
    mail.text(
        "EMAIL_URL",
        "inbox://" if DEBUG else "smtp://localhost:25",
        "Where the owners' mail goes: `smtp://user:password@host:587/?tls=1` (STARTTLS), "
        "`smtps://user:password@host:465`, `console://` (printed), or under DEBUG `inbox://` "
        "(kept in `var/mail`, read at `/dev/mail/`); options `tls`, `ssl`, `timeout`.",
        shown="`smtp://localhost:25` (DEBUG: `inbox://`)",
        secret=True,
    ),
    development=DEBUG,
)
# The development inbox's folder (`inbox://`): the web process's and the workers' mail in
# one place, Django's file-based backend's setting.
EMAIL_FILE_PATH = VAR_DIR / "mail"
EMAIL_BACKEND = _email["EMAIL_BACKEND"]
EMAIL_HOST = _email["EMAIL_HOST"]
EMAIL_PORT = _email["EMAIL_PORT"]
EMAIL_HOST_USER = _email["EMAIL_HOST_USER"]
EMAIL_HOST_PASSWORD = _email["EMAIL_HOST_PASSWORD"]
EMAIL_USE_TLS = _email["EMAIL_USE_TLS"]
EMAIL_USE_SSL = _email["EMAIL_USE_SSL"]
EMAIL_TIMEOUT = _email["EMAIL_TIMEOUT"]
DEFAULT_FROM_EMAIL = mail.text(
    "DEFAULT_FROM_EMAIL",
    "noreply@petstore.localhost",
    "The sender of the owners' mail (and of Django's own).",
)
SERVER_EMAIL = DEFAULT_FROM_EMAIL

# --- Webhooks ---------------------------------------------------------------

webhooks = Section("Webhooks")
WEBHOOKS_TIMEOUT = webhooks.number(
    "WEBHOOKS_TIMEOUT",
    5.0,
    "Seconds one delivery attempt may take in all (connect, send, the answer's first bytes).",
)
WEBHOOKS_ALLOW_LOOPBACK = webhooks.flag(
    "WEBHOOKS_ALLOW_LOOPBACK",
    DEBUG,
    "Lets endpoints use plain http, and a loopback address any port (a developer's machine); "
    "which addresses pass is `OUTBOUND_ALLOWED_NETWORKS`'. Never on in production.",
    shown="off (DEBUG: on)",
)
WEBHOOKS_CA_BUNDLE = webhooks.text(
    "WEBHOOKS_CA_BUNDLE",
    "",
    "A PEM file of CAs a receiver's certificate may chain to instead; empty: the system's.",
)
WEBHOOKS_CREATE_DNS_DEADLINE = webhooks.number(
    "WEBHOOKS_CREATE_DNS_DEADLINE",
    1.0,
    "Seconds the URL's DNS may take when an endpoint is added.",
)
WEBHOOKS_FAILED_CREATES_PER_HOUR = webhooks.integer(
    "WEBHOOKS_FAILED_CREATES_PER_HOUR",
    20,
    "URLs refused at Add per project per hour; past it Add is refused (429) before any DNS.",
)
# The webhooks worker has 8 threads: one tenant's silent receivers hold a few, never all.
WEBHOOKS_IN_FLIGHT_PER_HOST = webhooks.integer(
    "WEBHOOKS_IN_FLIGHT_PER_HOST", 2, "Delivery attempts in flight at once toward one host name."
)
WEBHOOKS_IN_FLIGHT_PER_PROJECT = webhooks.integer(
    "WEBHOOKS_IN_FLIGHT_PER_PROJECT", 3, "Delivery attempts in flight at once for one project."
)
WEBHOOKS_REDELIVER_PER_MINUTE = webhooks.integer(
    "WEBHOOKS_REDELIVER_PER_MINUTE", 10, "Redeliver presses per project per minute."
)

audit = Section("Audit log")
AUDIT_LOG_RETENTION_DAYS = audit.integer(
    "AUDIT_LOG_RETENTION_DAYS",
    400,
    "Days a project's audit entry is kept; a daily task deletes older ones, the only deletion "
    "the database allows.",
)
if AUDIT_LOG_RETENTION_DAYS < 1:
    raise ImproperlyConfigured(
        f"AUDIT_LOG_RETENTION_DAYS={AUDIT_LOG_RETENTION_DAYS}: set it to 1 day or more"
    )
