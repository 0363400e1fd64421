"""Every enumerated fact of the custom-domains feature, written once: value, label, help.

Models, forms, services, the dashboard and the staff commands read them from here;
nothing else spells a state, a code or a status as a raw string.
"""

from __future__ import annotations

from datetime import timedelta

from django.db import models


class Plan(models.TextChoices):
    FREE = "free", "Free"
    PRO = "pro", "Pro"
    BUSINESS = "business", "Business"
    ENTERPRISE = "enterprise", "Enterprise"


# Plans that may attach custom domains (the spec: "Pro or above").
PAID_PLANS = frozenset({Plan.PRO, Plan.BUSINESS, Plan.ENTERPRISE})
# Custom domains (claims, whatever their state) one project of each plan may hold.
PLAN_DOMAIN_QUOTA: dict[str, int] = {
    Plan.FREE: 0,
    Plan.PRO: 10,
    Plan.BUSINESS: 50,
    Plan.ENTERPRISE: 250,
}

# Project slugs that can never name a project: <slug>.PLATFORM_DOMAIN is public, and
# these are names people trust to be the platform's own.
RESERVED_PROJECT_SLUGS = frozenset(
    {
        "www", "api", "admin", "dashboard", "domains", "mail", "email", "smtp", "imap",
        "pop", "ftp", "ns", "ns1", "ns2", "dns", "mx", "cdn", "static", "assets", "media",
        "status", "help", "support", "docs", "blog", "billing", "account", "accounts",
        "login", "auth", "sso", "oauth", "app", "apps", "staging", "dev", "test", "beta",
        "internal", "ca", "acme", "security", "abuse", "postmaster", "hostmaster",
        "webmaster", "root", "localhost",
    }
)  # fmt: skip


class State(models.TextChoices):
    """Where a domain stands. The moves between them: domains/services/lifecycle.py."""

    PENDING = "pending", "Pending"
    VERIFIED = "verified", "Verified"
    ISSUING = "issuing", "Certificate issuing"
    ACTIVE = "active", "Active"
    FAILED = "failed", "Failed"
    MISCONFIGURED = "misconfigured", "Stopped serving"
    LOST = "lost", "Taken by another project"


# One line per state saying what it means for the owner (badges, the status line).
STATE_HELP: dict[str, str] = {
    State.PENDING: "Waiting for the DNS record. Create it, then choose Verify.",
    State.VERIFIED: "The DNS record is right and the domain is live. A certificate is on its way.",
    State.ISSUING: "The domain is live. The certificate authority is issuing its certificate.",
    State.ACTIVE: "Live with a certificate.",
    State.FAILED: "Verification failed. Fix the DNS record as described, then choose Re-verify.",
    State.MISCONFIGURED: (
        "Not served: its DNS record stopped pointing here and was not fixed in time. "
        "Fix the record, then choose Re-verify."
    ),
    State.LOST: (
        "Not served here: another project proved control of this name with a TXT record. "
        "If the name is yours, add this project's TXT record, then choose Re-verify."
    ),
}

# States in which the platform serves the domain: the spec says the domain is
# live once verification completes; HTTPS follows when the certificate lands.
LIVE_STATES = frozenset({State.VERIFIED, State.ISSUING, State.ACTIVE})
# States that change by themselves, without the owner: the dashboard keeps polling.
MOVING_STATES = frozenset({State.PENDING, State.VERIFIED, State.ISSUING})
# States whose page leads with the DNS record to create (the owner has work to do).
AWAITING_OWNER_STATES = frozenset({State.PENDING, State.FAILED, State.MISCONFIGURED, State.LOST})


class CertState(models.TextChoices):
    """Where a domain's certificate stands; which go with which State: CERT_STATES."""

    NONE = "none", "No certificate"
    REQUESTED = "requested", "Requested"
    ISSUED = "issued", "Issued"
    BLOCKED = "blocked", "Blocked"


# The certificate states a domain may have in each state, as the transitions leave them
# (domains/services/lifecycle.py); a database constraint built from this table
# (Domain.Meta) refuses every other pair. A served domain's state says where its
# certificate stands: issuing means requested, active means issued, and verified means
# the request was blocked (CAA, the CA), or none was made yet (the sweep makes it). A
# domain that is not served keeps the certificate state it had when it stopped.
CERT_STATES: dict[str, frozenset[str]] = {
    State.PENDING: frozenset(CertState),
    State.VERIFIED: frozenset({CertState.NONE, CertState.BLOCKED}),
    State.ISSUING: frozenset({CertState.REQUESTED}),
    State.ACTIVE: frozenset({CertState.ISSUED}),
    State.FAILED: frozenset(CertState),
    State.MISCONFIGURED: frozenset(CertState),
    State.LOST: frozenset(CertState),
}

# Certificate work still not done this long after its issue delay
# (DOMAINS_CERT_ISSUE_DELAY) is late, and is claimed and queued again. Two rules, so two
# facts. A check that passes while the domain is issuing (the owner chose Re-verify and
# waits) asks again after a minute. The sweep runs every minute with nobody waiting and
# takes a request for lost only after five, so it does not queue again, each minute, work
# still under way (an ACME order being validated, a task waiting out its retry).
CERT_LATE_AT_CHECK = timedelta(minutes=1)
CERT_LOST_AT_SWEEP = timedelta(minutes=5)


class CheckCode(models.TextChoices):
    """The outcome of a DNS check (domains/dns/diagnosis.py), for programs and staff."""

    OK = "ok", "Verifies"
    NO_RECORD = "no_record", "No record yet"
    NXDOMAIN = "nxdomain", "The name does not exist"
    WRONG_TARGET = "wrong_target", "Points elsewhere"
    CONFLICTING_RECORD = "conflicting_record", "A conflicting record"
    CAA_BLOCKED = "caa_blocked", "CAA blocks the certificate authority"
    DNS_TIMEOUT = "dns_timeout", "The DNS did not answer in time"
    DNS_SERVFAIL = "dns_servfail", "The DNS failed to answer"
    TARGET_UNRESOLVED = "target_unresolved", "The platform target did not resolve"
    OWNERSHIP_REQUIRED = "ownership_required", "The TXT record is missing"
    PROVEN_ELSEWHERE = "proven_elsewhere", "Another project's TXT record is there too"
    UNASKABLE = "unaskable", "The name cannot be asked in DNS"


class CertCode(models.TextChoices):
    """Why no certificate could be issued when it is not the DNS (whose CheckCode, such as
    caa_blocked, is stored in its place)."""

    CA_REFUSED = "ca_refused", "The CA refused the order"


# Temporary: retried, never reported as the owner's misconfiguration.
TEMPORARY_CHECK_CODES = frozenset(
    {CheckCode.DNS_TIMEOUT, CheckCode.DNS_SERVFAIL, CheckCode.TARGET_UNRESOLVED}
)


class Action(models.TextChoices):
    """What an Activity line (DomainEvent) records, in the owner's words."""

    ADDED = "added", "Added the domain"
    VERIFY_REQUESTED = "verify_requested", "Chose Verify"
    REVERIFY_REQUESTED = "reverify_requested", "Chose Re-verify"
    VERIFIED = "verified", "Verification passed"
    VERIFIES_AGAIN = "verifies_again", "Verifies again"
    CHECK_FAILED = "check_failed", "Check failed"
    FAILED = "failed", "Verification failed"
    STOPPED_VERIFYING = "stopped_verifying", "Stopped verifying"
    CERTIFICATE_REQUESTED = "certificate_requested", "Certificate requested"
    CERTIFICATE_ISSUED = "certificate_issued", "Certificate issued"
    CERTIFICATE_BLOCKED = "certificate_blocked", "Certificate blocked"
    CERTIFICATE_RENEWED = "certificate_renewed", "Certificate renewed"
    RENEWAL_BLOCKED = "renewal_blocked", "Renewal blocked"
    REMOVED = "removed", "Removed the domain"
    PRIMARY_SET = "primary_set", "Set the primary domain"
    REDIRECT_SAVED = "redirect_saved", "Saved a redirect"
    REDIRECT_DELETED = "redirect_deleted", "Deleted a redirect"
    EXPIRED = "expired", "Dropped: never verified"
    RIVAL_CLAIM = "rival_claim", "Another project claimed this name"
    TOOK_OVER = "took_over", "Took the name over with the TXT record"
    LOST = "lost", "Lost the name to another project"
    STOPPED_SERVING = "stopped_serving", "Stopped serving"
    PRIMARY_CLEARED = "primary_cleared", "Primary domain cleared"
    REDIRECT_PAUSED = "redirect_paused", "Redirect paused: its target is not served"
    REDIRECT_RESUMED = "redirect_resumed", "Redirect resumed: its target is served again"


# Lines an owner must not miss: someone else is after the name, or the name (or where its
# visitors are sent) changed hands or stopped. The domain's page shows them in a block of
# their own above the feed, so no flood of ordinary lines can push them out of sight.
SECURITY_ACTIONS = frozenset(
    {
        Action.RIVAL_CLAIM,
        Action.TOOK_OVER,
        Action.LOST,
        Action.STOPPED_SERVING,
        Action.REDIRECT_PAUSED,
    }
)


class RedirectStatus(models.IntegerChoices):
    MOVED_PERMANENTLY = 301, "301 Moved Permanently"
    FOUND = 302, "302 Found (temporary)"
    TEMPORARY_REDIRECT = 307, "307 Temporary Redirect"
    PERMANENT_REDIRECT = 308, "308 Permanent Redirect"
