"""Every enumeration of the custom-domains feature, written once: each value with its
label, and the sets made of them beside the values they are made of.

Models, forms, services, the dashboard and the staff commands read them from here;
nothing else spells a state, a code or a status as a raw string. How much and how long
(quotas, windows, leases, backoffs) is domains/policy.py's; the sentences that tell an
owner what a state means or what to do are templates (templates/domains/copy/). This
module imports nothing of ours (tests/test_architecture.py).
"""

from __future__ import annotations

from django.db import models


class Plan(models.TextChoices):
    FREE = "free", "Free"
    PRO = "pro", "Pro"
    BUSINESS = "business", "Business"
    ENTERPRISE = "enterprise", "Enterprise"


# Plans that may attach custom domains (the spec: "Pro or above").
PAID_PLANS = frozenset({Plan.PRO, Plan.BUSINESS, Plan.ENTERPRISE})


class State(models.TextChoices):
    """Where a domain stands. The moves between them: domains/services/lifecycle.py."""

    PENDING = "pending", "Pending"
    VERIFIED = "verified", "Verified"
    ISSUING = "issuing", "Certificate issuing"
    ACTIVE = "active", "Active"
    FAILED = "failed", "Failed"
    MISCONFIGURED = "misconfigured", "Stopped serving"
    LOST = "lost", "Taken by another project"


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


class FindingCode(models.TextChoices):
    """What the domain doctor (domains/dns/doctor.py) found by asking the zone's own name
    servers each directly; the owner's words for each are there."""

    NAMESERVERS_DISAGREE = "nameservers_disagree", "The zone's name servers disagree"
    NAMESERVER_UNREACHABLE = "nameserver_unreachable", "A name server of the zone does not answer"
    CACHED_ELSEWHERE = "cached_elsewhere", "Resolvers still have the old answer"
    EXTRA_ADDRESS = "extra_address", "An address beside the right ones"
    NAMESERVERS_UNASKED = "nameservers_unasked", "Some of the zone's name servers were not asked"


class NameCode(models.TextChoices):
    """Why a well-formed host name a tenant typed (Add domain, a webhook's URL) is refused:
    the public DNS cannot resolve it, so only a private view (a VPC's, a cluster's, an
    office's resolver) could answer for it (domains/dns/hostnames.py)."""

    SPECIAL_USE = "special_use_name", "A special-use name"
    NOT_PUBLIC = "not_public_name", "Not a name of the public DNS"


# The sentence of each NameCode, with the name, its suffix and (special-use) what the
# suffix is kept for.
NAME_REFUSALS: dict[str, str] = {
    NameCode.SPECIAL_USE: (
        "{name} ends in .{suffix}, which is kept for {use}: the public DNS never resolves "
        "it. Enter a name under a public top-level domain, for example shop.example.com."
    ),
    NameCode.NOT_PUBLIC: (
        "{name} ends in .{suffix}, which is not a top-level domain of the public DNS (the "
        "Public Suffix List's ICANN section): only a private network could resolve it. "
        "Enter a name under a public top-level domain, for example shop.example.com."
    ),
}

# Special-use names (the IANA registry, RFC 6761 and its successors, and the suffixes
# never delegated because private networks use them) and what each is kept for: refused
# whether or not the Public Suffix List holds them (it holds `arpa`, `home.arpa`, `onion`).
# DOMAINS_LOCAL_SUFFIXES lets some through where the platform has a zone of its own.
SPECIAL_USE_SUFFIXES: dict[str, str] = {
    "arpa": "the DNS's own infrastructure, such as reverse lookups (RFC 3172)",
    "home.arpa": "home networks (RFC 8375)",
    "internal": "private networks (ICANN, 2024)",
    "local": "multicast DNS on the local link (RFC 6762)",
    "localhost": "this machine (RFC 6761)",
    "lan": "home and office networks",
    "home": "home networks (never delegated: it collides with private use)",
    "corp": "company networks (never delegated: it collides with private use)",
    "onion": "Tor onion services (RFC 7686)",
    "invalid": "names that must never resolve (RFC 6761)",
    "test": "testing (RFC 6761)",
    "example": "documentation (RFC 6761)",
    "alt": "name systems other than DNS (RFC 9476)",
}


class CertCode(models.TextChoices):
    """Why no certificate could be issued when it is not the DNS (whose CheckCode, such as
    caa_blocked, is stored in its place)."""

    CA_REFUSED = "ca_refused", "The CA refused the order"


class PlatformKeyUse(models.TextChoices):
    """The platform's own private keys (PlatformKey), one of each, kept in the database."""

    ACME_ACCOUNT = "acme_account", "The ACME account's key"
    LOCAL_CA = "local_ca", "The local CA's key and certificate"


# Temporary: retried, never reported as the owner's misconfiguration.
TEMPORARY_CHECK_CODES = frozenset(
    {CheckCode.DNS_TIMEOUT, CheckCode.DNS_SERVFAIL, CheckCode.TARGET_UNRESOLVED}
)

# The record is not there at all: "not yet" for a new claim, "gone" for a domain that was served.
MISSING_RECORD_CODES = frozenset({CheckCode.NO_RECORD, CheckCode.NXDOMAIN})


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
    CERTIFICATE_DELAYED = "certificate_delayed", "Certificate delayed: the CA could not reach us"
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


class EventType(models.TextChoices):
    """What the owner is told about, by every channel of domains/channels/ (email,
    webhooks): the same outbox rows (OwnerEvent) feed them all."""

    DOMAIN_ACTIVE = "domain.active", "The domain is live with its certificate"
    DOMAIN_FAILING = "domain.failing", "A check of a live domain failed"
    DOMAIN_STOPPED = "domain.stopped", "The domain stopped serving"
    DOMAIN_RECOVERED = "domain.recovered", "The domain verifies again"
    CERTIFICATE_RENEWAL_FAILED = "certificate.renewal_failed", "A certificate renewal failed"
    CLAIM_CONTESTED = "claim.contested", "Another project claimed the name"
    CLAIM_LOST = "claim.lost", "Another project's TXT proof took the name"
    CLAIM_EXPIRED = "claim.expired", "A claim that never verified was dropped"
    REDIRECT_PAUSED = "redirect.paused", "A redirect paused: its target is not live"


# What the owner must act on: the events an owner receives unless they choose otherwise.
ACTION_NEEDED_EVENTS = frozenset(EventType) - {EventType.DOMAIN_ACTIVE, EventType.DOMAIN_RECOVERED}

# The Activity lines that are also owner events: the service that records the line records
# the event in the same transaction, through the same call (domains/services/events.py).
# A domain verifying again is told only after a failure the owner was told about.
OWNER_EVENT_OF_ACTION: dict[str, EventType] = {
    Action.CERTIFICATE_ISSUED: EventType.DOMAIN_ACTIVE,
    Action.STOPPED_VERIFYING: EventType.DOMAIN_FAILING,
    Action.STOPPED_SERVING: EventType.DOMAIN_STOPPED,
    Action.VERIFIES_AGAIN: EventType.DOMAIN_RECOVERED,
    Action.VERIFIED: EventType.DOMAIN_RECOVERED,
    Action.RENEWAL_BLOCKED: EventType.CERTIFICATE_RENEWAL_FAILED,
    Action.RIVAL_CLAIM: EventType.CLAIM_CONTESTED,
    Action.LOST: EventType.CLAIM_LOST,
    Action.EXPIRED: EventType.CLAIM_EXPIRED,
    Action.REDIRECT_PAUSED: EventType.REDIRECT_PAUSED,
}
# The events after which a domain verifying again is `domain.recovered`.
RECOVERED_FROM = frozenset(
    {EventType.DOMAIN_FAILING, EventType.DOMAIN_STOPPED, EventType.CLAIM_LOST}
)


class RedirectStatus(models.IntegerChoices):
    MOVED_PERMANENTLY = 301, "301 Moved Permanently"
    FOUND = 302, "302 Found (temporary)"
    TEMPORARY_REDIRECT = 307, "307 Temporary Redirect"
    PERMANENT_REDIRECT = 308, "308 Permanent Redirect"


class DeliveryState(models.TextChoices):
    """Where a delivery of an owner event to one target stands (Delivery.state, every
    channel of domains/channels/)."""

    PENDING = "pending", "Waiting for its (next) attempt"
    SENDING = "sending", "Being sent"
    DELIVERED = "delivered", "Delivered (2xx, or mailed)"
    SKIPPED = "skipped", "Not sent: not chosen, or told already today"
    FAILED = "failed", "Failed after every retry"


# A delivery in one of these may still be attempted; the others are final.
WAITING_DELIVERY_STATES = frozenset({DeliveryState.PENDING, DeliveryState.SENDING})
