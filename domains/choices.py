"""Every enumeration of the custom-domains feature, written once: each value with its
label, and the sets made of them beside the values they are made of.

Models, forms, services, the dashboard and the staff commands read them from here;
nothing else spells a state, a code or a status as a raw string. How much and how long
(quotas, windows, leases, backoffs) is domains/policy.py's; the sentences that tell an
owner what a state means or what to do are templates (templates/domains/copy/). This
module imports nothing of ours (tests/repository/test_architecture.py). Labels are marked for
translation beside their values (the owner reads them in their language); values are codes
and stay as they are.
"""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class Plan(models.TextChoices):
    FREE = "free", _("Free")
    PRO = "pro", _("Pro")
    BUSINESS = "business", _("Business")
    ENTERPRISE = "enterprise", _("Enterprise")


# Plans that may attach custom domains (the spec: "Pro or above").
PAID_PLANS = frozenset({Plan.PRO, Plan.BUSINESS, Plan.ENTERPRISE})


class Role(models.TextChoices):
    """A member's role on a project, the smallest first (domains/access.py: what each may do)."""

    VIEWER = "viewer", _("Viewer")
    DEVELOPER = "developer", _("Developer")
    ADMIN = "admin", _("Admin")
    OWNER = "owner", _("Owner")


class State(models.TextChoices):
    """Where a domain stands. The moves between them: domains/services/lifecycle.py."""

    PENDING = "pending", _("Pending")
    VERIFIED = "verified", _("Verified")
    ISSUING = "issuing", _("Certificate issuing")
    ACTIVE = "active", _("Active")
    FAILED = "failed", _("Failed")
    MISCONFIGURED = "misconfigured", _("Stopped serving")
    LOST = "lost", _("Taken by another project")


# States in which the platform serves the domain: the spec says the domain is
# live once verification completes; HTTPS follows when the certificate lands.
LIVE_STATES = frozenset({State.VERIFIED, State.ISSUING, State.ACTIVE})
# States that change by themselves, without the owner: the dashboard keeps polling.
MOVING_STATES = frozenset({State.PENDING, State.VERIFIED, State.ISSUING})
# States whose page leads with the DNS record to create (the owner has work to do).
AWAITING_OWNER_STATES = frozenset({State.PENDING, State.FAILED, State.MISCONFIGURED, State.LOST})


class CertState(models.TextChoices):
    """Where a domain's certificate stands; which go with which State: CERT_STATES."""

    NONE = "none", _("No certificate")
    REQUESTED = "requested", _("Requested")
    ISSUED = "issued", _("Issued")
    BLOCKED = "blocked", _("Blocked")


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

    OK = "ok", _("Verifies")
    NO_RECORD = "no_record", _("No record yet")
    NXDOMAIN = "nxdomain", _("The name does not exist")
    WRONG_TARGET = "wrong_target", _("Points elsewhere")
    CONFLICTING_RECORD = "conflicting_record", _("A conflicting record")
    CAA_BLOCKED = "caa_blocked", _("CAA blocks the certificate authority")
    DNS_TIMEOUT = "dns_timeout", _("The DNS did not answer in time")
    DNS_SERVFAIL = "dns_servfail", _("The DNS failed to answer")
    TARGET_UNRESOLVED = "target_unresolved", _("The platform target did not resolve")
    OWNERSHIP_REQUIRED = "ownership_required", _("The TXT record is missing")
    PROVEN_ELSEWHERE = "proven_elsewhere", _("Another project's TXT record is there too")
    UNASKABLE = "unaskable", _("The name cannot be asked in DNS")
    CHALLENGE_NOT_DELEGATED = (
        "challenge_not_delegated",
        _("The wildcard's _acme-challenge CNAME is missing"),
    )


class FindingCode(models.TextChoices):
    """What the domain doctor (domains/dns/doctor.py) found by asking the zone's own name
    servers each directly; the owner's words for each are there."""

    NAMESERVERS_DISAGREE = "nameservers_disagree", _("The zone's name servers disagree")
    NAMESERVERS_WRONG = "nameservers_wrong", _("No name server of the zone gives the right record")
    NAMESERVER_UNREACHABLE = (
        "nameserver_unreachable",
        _("A name server of the zone does not answer"),
    )
    CACHED_ELSEWHERE = "cached_elsewhere", _("Resolvers still have the old answer")
    EXTRA_ADDRESS = "extra_address", _("An address beside the right ones")
    NAMESERVERS_UNASKED = "nameservers_unasked", _("Some of the zone's name servers were not asked")
    CHALLENGE_NOT_DELEGATED = (
        "challenge_not_delegated",
        _("A name server lacks the wildcard's _acme-challenge CNAME"),
    )


class NameCode(models.TextChoices):
    """Why a well-formed host name a tenant typed (Add domain, a webhook's URL) is refused:
    the public DNS cannot resolve it, so only a private view (a VPC's, a cluster's, an
    office's resolver) could answer for it (domains/dns/hostnames.py)."""

    SPECIAL_USE = "special_use_name", _("A special-use name")
    NOT_PUBLIC = "not_public_name", _("Not a name of the public DNS")


# The sentence of each NameCode, with the name, its suffix and (special-use) what the
# suffix is kept for.
NAME_REFUSALS = {
    NameCode.SPECIAL_USE.value: _(
        "{name} ends in .{suffix}, which is kept for {use}: the public DNS never resolves "
        "it. Enter a name under a public top-level domain, for example shop.example.com."
    ),
    NameCode.NOT_PUBLIC.value: _(
        "{name} ends in .{suffix}, which is not a top-level domain of the public DNS (the "
        "Public Suffix List's ICANN section): only a private network could resolve it. "
        "Enter a name under a public top-level domain, for example shop.example.com."
    ),
}

# Special-use names (the IANA registry, RFC 6761 and its successors, and the suffixes
# never delegated because private networks use them) and what each is kept for: refused
# whether or not the Public Suffix List holds them (it holds `arpa`, `home.arpa`, `onion`).
# DOMAINS_LOCAL_SUFFIXES lets some through where the platform has a zone of its own.
SPECIAL_USE_SUFFIXES = {
    "arpa": _("the DNS's own infrastructure, such as reverse lookups (RFC 3172)"),
    "home.arpa": _("home networks (RFC 8375)"),
    "internal": _("private networks (ICANN, 2024)"),
    "local": _("multicast DNS on the local link (RFC 6762)"),
    "localhost": _("this machine (RFC 6761)"),
    "lan": _("home and office networks"),
    "home": _("home networks (never delegated: it collides with private use)"),
    "corp": _("company networks (never delegated: it collides with private use)"),
    "onion": _("Tor onion services (RFC 7686)"),
    "invalid": _("names that must never resolve (RFC 6761)"),
    "test": _("testing (RFC 6761)"),
    "example": _("documentation (RFC 6761)"),
    "alt": _("name systems other than DNS (RFC 9476)"),
}


class CertCode(models.TextChoices):
    """Why no certificate could be issued when it is not the DNS (whose CheckCode, such as
    caa_blocked, is stored in its place)."""

    CA_REFUSED = "ca_refused", _("The CA refused the order")


class PlatformKeyUse(models.TextChoices):
    """The platform's own private keys (PlatformKey), one of each, kept in the database."""

    ACME_ACCOUNT = "acme_account", _("The ACME account's key")
    LOCAL_CA = "local_ca", _("The local CA's key and certificate")
    # The certificate of *.PLATFORM_DOMAIN and PLATFORM_DOMAIN (its chain in certificate_pem),
    # issued over DNS-01 (domains/services/platformcertificate.py).
    PLATFORM_CERTIFICATE = "platform_cert", _("The platform's wildcard certificate and its key")


class CaSkipReason(models.TextChoices):
    """Why an order moved on from one certificate authority to the next: each the CA's own
    failure, never the owner's (domains/pki/authority.py `Unavailable`)."""

    RATE_LIMITED = "rate_limited", _("it limits the platform's rate")
    SERVER_ERROR = "server_error", _("it answered with a server error")
    UNREACHABLE = "unreachable", _("it could not be reached")
    SLOW = "slow", _("it did not finish in time")


# Temporary: retried, never reported as the owner's misconfiguration.
TEMPORARY_CHECK_CODES = frozenset(
    {CheckCode.DNS_TIMEOUT, CheckCode.DNS_SERVFAIL, CheckCode.TARGET_UNRESOLVED}
)

# The record is not there at all: "not yet" for a new claim, "gone" for a domain that was served.
MISSING_RECORD_CODES = frozenset({CheckCode.NO_RECORD, CheckCode.NXDOMAIN})


class Action(models.TextChoices):
    """What an Activity line (DomainEvent) records, in the owner's words."""

    ADDED = "added", _("Added the domain")
    VERIFY_REQUESTED = "verify_requested", _("Chose Verify")
    REVERIFY_REQUESTED = "reverify_requested", _("Chose Re-verify")
    VERIFIED = "verified", _("Verification passed")
    VERIFIES_AGAIN = "verifies_again", _("Verifies again")
    CHECK_FAILED = "check_failed", _("Check failed")
    FAILED = "failed", _("Verification failed")
    STOPPED_VERIFYING = "stopped_verifying", _("Stopped verifying")
    CERTIFICATE_REQUESTED = "certificate_requested", _("Certificate requested")
    CERTIFICATE_ISSUED = "certificate_issued", _("Certificate issued")
    CERTIFICATE_BLOCKED = "certificate_blocked", _("Certificate blocked")
    CERTIFICATE_DELAYED = "certificate_delayed", _("Certificate delayed: the CA could not reach us")
    CERTIFICATE_RENEWED = "certificate_renewed", _("Certificate renewed")
    CA_SKIPPED = "ca_skipped", _("Certificate authority skipped: the next one was asked")
    RENEWAL_BLOCKED = "renewal_blocked", _("Renewal blocked")
    REMOVED = "removed", _("Removed the domain")
    PRIMARY_SET = "primary_set", _("Set the primary domain")
    REDIRECT_SAVED = "redirect_saved", _("Saved a redirect")
    REDIRECT_DELETED = "redirect_deleted", _("Deleted a redirect")
    EXPIRED = "expired", _("Dropped: never verified")
    RIVAL_CLAIM = "rival_claim", _("Another project claimed this name")
    TOOK_OVER = "took_over", _("Took the name over with the TXT record")
    LOST = "lost", _("Lost the name to another project")
    STOPPED_SERVING = "stopped_serving", _("Stopped serving")
    PRIMARY_CLEARED = "primary_cleared", _("Primary domain cleared")
    REDIRECT_PAUSED = "redirect_paused", _("Redirect paused: its target is not served")
    REDIRECT_RESUMED = "redirect_resumed", _("Redirect resumed: its target is served again")


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

    DOMAIN_ACTIVE = "domain.active", _("The domain is live with its certificate")
    DOMAIN_FAILING = "domain.failing", _("A check of a live domain failed")
    DOMAIN_STOPPED = "domain.stopped", _("The domain stopped serving")
    DOMAIN_RECOVERED = "domain.recovered", _("The domain verifies again")
    CERTIFICATE_RENEWAL_FAILED = "certificate.renewal_failed", _("A certificate renewal failed")
    CLAIM_CONTESTED = "claim.contested", _("Another project claimed the name")
    CLAIM_LOST = "claim.lost", _("Another project's TXT proof took the name")
    CLAIM_EXPIRED = "claim.expired", _("A claim that never verified was dropped")
    REDIRECT_PAUSED = "redirect.paused", _("A redirect paused: its target is not live")
    KEY_EXPIRING = "key.expiring", _("An API key ends soon")


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
    MOVED_PERMANENTLY = 301, _("301 Moved Permanently")
    FOUND = 302, _("302 Found (temporary)")
    TEMPORARY_REDIRECT = 307, _("307 Temporary Redirect")
    PERMANENT_REDIRECT = 308, _("308 Permanent Redirect")


class DeliveryState(models.TextChoices):
    """Where a delivery of an owner event to one target stands (Delivery.state, every
    channel of domains/channels/)."""

    PENDING = "pending", _("Waiting for its (next) attempt")
    SENDING = "sending", _("Being sent")
    DELIVERED = "delivered", _("Delivered")
    SKIPPED = "skipped", _("Not sent: not chosen, or told already today")
    FAILED = "failed", _("Failed after every retry")


# A delivery in one of these may still be attempted; the others are final.
WAITING_DELIVERY_STATES = frozenset({DeliveryState.PENDING, DeliveryState.SENDING})


class AuditAction(models.TextChoices):
    """What an audit entry records (domains/services/audit.py): every change to a project,
    named `subject.verb`, the owner event's name where the change is one."""

    PROJECT_CREATED = "project.created", _("Created the project")
    PROJECT_DELETED = "project.deleted", _("Deleted the project")
    PROJECT_CHANGED = "project.changed", _("Changed the project's name, slug or owner")
    PLAN_CHANGED = "plan.changed", _("Changed the plan")
    NOTIFICATIONS_CHANGED = "notifications.changed", _("Changed the notification settings")
    DOMAIN_ADDED = "domain.added", _("Added a domain")
    DOMAIN_REMOVED = "domain.removed", _("Removed a domain")
    DOMAIN_VERIFY_REQUESTED = "domain.verify_requested", _("Chose Verify")
    DOMAIN_REVERIFY_REQUESTED = "domain.reverify_requested", _("Chose Re-verify")
    DOMAIN_PRIMARY_SET = "domain.primary_set", _("Set the primary domain")
    DOMAIN_PRIMARY_CLEARED = "domain.primary_cleared", _("The primary domain was cleared")
    DOMAIN_STOPPED = EventType.DOMAIN_STOPPED.value, _("A failing domain stopped serving")
    CLAIM_EXPIRED = EventType.CLAIM_EXPIRED.value, _("A claim that never verified was dropped")
    CLAIM_LOST = EventType.CLAIM_LOST.value, _("Another project's TXT proof took the name")
    CERTIFICATE_ISSUED = "certificate.issued", _("A certificate was issued")
    CERTIFICATE_RENEWED = "certificate.renewed", _("A certificate was renewed")
    REDIRECT_SAVED = "redirect.saved", _("Saved a redirect")
    REDIRECT_DELETED = "redirect.deleted", _("Deleted a redirect")
    REDIRECT_PAUSED = (
        EventType.REDIRECT_PAUSED.value,
        _("A redirect paused: its target is not live"),
    )
    REDIRECT_RESUMED = "redirect.resumed", _("A redirect resumed: its target is live again")
    WEBHOOK_CREATED = "webhook.created", _("Added a webhook endpoint")
    WEBHOOK_DELETED = "webhook.deleted", _("Deleted a webhook endpoint")
    WEBHOOK_SECRET_ROTATED = "webhook.secret_rotated", _("Rotated a webhook endpoint's secret")
    DELIVERY_REDELIVERED = "delivery.redelivered", _("Redelivered a webhook delivery")
    MEMBER_INVITED = "member.invited", _("Invited a member")
    MEMBER_INVITATION_REVOKED = "member.invitation_revoked", _("Revoked an invitation")
    MEMBER_JOINED = "member.joined", _("Accepted an invitation")
    MEMBER_ADDED = "member.added", _("Added a member")
    MEMBER_ROLE_CHANGED = "member.role_changed", _("Changed a member's role")
    MEMBER_REMOVED = "member.removed", _("Removed a member")
    MEMBER_LEFT = "member.left", _("Left the project")
    MEMBER_OWNERSHIP_TRANSFERRED = "member.ownership_transferred", _("Transferred the ownership")
    KEY_CREATED = "key.created", _("Created an API key")
    KEY_REVOKED = "key.revoked", _("Revoked an API key")


# The Activity lines that are also audit entries: domains/services/events.py's record_event
# writes the entry with the line, so a service that records the one records the other.
AUDIT_ACTION_OF_ACTION: dict[str, AuditAction] = {
    Action.ADDED: AuditAction.DOMAIN_ADDED,
    Action.REMOVED: AuditAction.DOMAIN_REMOVED,
    Action.VERIFY_REQUESTED: AuditAction.DOMAIN_VERIFY_REQUESTED,
    Action.REVERIFY_REQUESTED: AuditAction.DOMAIN_REVERIFY_REQUESTED,
    Action.PRIMARY_SET: AuditAction.DOMAIN_PRIMARY_SET,
    Action.PRIMARY_CLEARED: AuditAction.DOMAIN_PRIMARY_CLEARED,
    Action.STOPPED_SERVING: AuditAction.DOMAIN_STOPPED,
    Action.EXPIRED: AuditAction.CLAIM_EXPIRED,
    Action.LOST: AuditAction.CLAIM_LOST,
    Action.CERTIFICATE_ISSUED: AuditAction.CERTIFICATE_ISSUED,
    Action.CERTIFICATE_RENEWED: AuditAction.CERTIFICATE_RENEWED,
    Action.REDIRECT_SAVED: AuditAction.REDIRECT_SAVED,
    Action.REDIRECT_DELETED: AuditAction.REDIRECT_DELETED,
    Action.REDIRECT_PAUSED: AuditAction.REDIRECT_PAUSED,
    Action.REDIRECT_RESUMED: AuditAction.REDIRECT_RESUMED,
}
