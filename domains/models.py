"""Projects, their deploys, custom domains, redirects, certificates and events.

The rules that change these rows live in domains/services/; the moves between a
domain's states in domains/services/lifecycle.py; every enumerated value in
domains/choices.py; reusable reads in domains/querysets.py.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from functools import reduce
from operator import or_
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone
from django.utils.functional import cached_property

from domains.choices import (
    ACTION_NEEDED_EVENTS,
    CERT_STATES,
    LIVE_STATES,
    PAID_PLANS,
    RESERVED_PROJECT_SLUGS,
    Action,
    CertState,
    DeliveryState,
    EmailState,
    EventType,
    Plan,
    RedirectStatus,
    State,
)
from domains.dns import hostnames
from domains.querysets import (
    CertificateQuerySet,
    DomainQuerySet,
    OwnerEventQuerySet,
    ProjectQuerySet,
)

# How long after verification a missing certificate becomes something to troubleshoot (spec).
TROUBLESHOOT_AFTER = timedelta(minutes=30)
CNAME_TTL = 3600


def validate_project_slug(slug: str) -> None:
    if slug.lower() in RESERVED_PROJECT_SLUGS:
        raise ValidationError(
            f"{slug!r} is reserved: {slug}.{settings.PLATFORM_DOMAIN} must never look like "
            "the platform's own. Choose another slug.",
            code="reserved_slug",
        )


class Project(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="projects"
    )
    slug = models.SlugField(max_length=63, unique=True, validators=[validate_project_slug])
    name = models.CharField(max_length=200, blank=True)
    plan = models.CharField(max_length=20, choices=Plan.choices, default=Plan.FREE)
    primary_domain = models.ForeignKey(
        "Domain", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    objects = ProjectQuerySet.as_manager()

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    @property
    def platform_host(self) -> str:
        return f"{self.slug}.{settings.PLATFORM_DOMAIN}"

    @property
    def latest_deploy(self) -> Deploy | None:
        return self.deploys.filter(succeeded=True).order_by("-created_at", "-pk").first()

    @property
    def is_paid(self) -> bool:
        return self.plan in PAID_PLANS


class Deploy(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="deploys")
    succeeded = models.BooleanField(default=True)
    html = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        outcome = "ok" if self.succeeded else "failed"
        return f"{self.project.slug} deploy #{self.pk} ({outcome})"


def new_verification_token() -> str:
    return secrets.token_hex(16)


class Domain(models.Model):
    """One project's claim on a host name. Several projects may claim the same name; at
    most one claim is live (a database constraint), and only a proven one is served."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="domains")
    # ASCII (IDNA) form, lower case, no trailing dot.
    hostname = models.CharField(max_length=253, db_index=True)
    # This claim's own secret: the TXT record that proves control carries it.
    verification_token = models.CharField(max_length=64, default=new_verification_token)
    is_apex = models.BooleanField(default=False)
    state = models.CharField(max_length=20, choices=State.choices, default=State.PENDING)

    # The last check, for a person (message) and a program (code, expected, found).
    check_code = models.CharField(max_length=40, blank=True)
    check_message = models.TextField(blank=True)
    check_expected = models.CharField(max_length=500, blank=True)
    check_found = models.CharField(max_length=500, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)
    next_check_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # Backoff bookkeeping: failed checks since the window opened, and when it opened.
    check_attempts = models.PositiveIntegerField(default=0)
    # When Verify / Re-verify last asked for a check: a check is under way until checked_at
    # passes it.
    check_requested_at = models.DateTimeField(null=True, blank=True)
    window_started_at = models.DateTimeField(default=timezone.now)
    verified_at = models.DateTimeField(null=True, blank=True)
    # The first failed check of a live domain; Verify does not reset it, a passing check
    # does. The domain stops serving DOMAINS_GRACE_HOURS after it.
    failing_since = models.DateTimeField(null=True, blank=True)
    # The first of an unbroken run of temporary check failures (SERVFAIL, timeout) of a live
    # domain; a check that is not a temporary failure clears it. After
    # DOMAINS_TEMPORARY_FAILURE_LIMIT hours the run counts as failing (`failing_since`).
    failing_temporarily_since = models.DateTimeField(null=True, blank=True)

    # The certificate side: its state, when it was requested, and the last problem.
    cert_state = models.CharField(max_length=20, choices=CertState.choices, default=CertState.NONE)
    cert_requested_at = models.DateTimeField(null=True, blank=True)
    cert_code = models.CharField(max_length=40, blank=True)
    cert_message = models.TextField(blank=True)

    created_at = models.DateTimeField(default=timezone.now)

    objects = DomainQuerySet.as_manager()

    class Meta:
        ordering = ["hostname"]
        constraints = [
            models.UniqueConstraint(
                fields=["hostname"],
                condition=models.Q(state__in=sorted(LIVE_STATES)),
                name="domains_one_live_claim_per_hostname",
            ),
            models.UniqueConstraint(
                fields=["project", "hostname"], name="domains_one_claim_per_project"
            ),
            # State and certificate state move in step: the pairs domains.choices.CERT_STATES
            # allows, and no other.
            models.CheckConstraint(
                condition=reduce(
                    or_,
                    (
                        models.Q(state=state, cert_state__in=sorted(cert_states))
                        for state, cert_states in sorted(CERT_STATES.items())
                    ),
                ),
                name="domains_cert_state_in_step_with_state",
            ),
        ]

    def __str__(self) -> str:
        return self.hostname

    @property
    def hostname_unicode(self) -> str:
        return hostnames.to_unicode(self.hostname)

    @property
    def is_live(self) -> bool:
        return self.state in LIVE_STATES

    def stops_serving_at(self, *, failing_since: datetime | None = None) -> datetime | None:
        """When this served domain stops serving: DOMAINS_GRACE_HOURS after its first failed
        check (the row's `failing_since`, or the one a check is about to record); None while
        nothing fails or the domain is not served."""
        failing_since = failing_since or self.failing_since
        if not self.is_live or failing_since is None:
            return None
        return failing_since + timedelta(hours=settings.DOMAINS_GRACE_HOURS)

    @property
    def check_in_progress(self) -> bool:
        """A Verify / Re-verify was requested and no check has finished since."""
        requested = self.check_requested_at
        return requested is not None and (self.checked_at is None or self.checked_at < requested)

    @property
    def redirect_target(self) -> Domain | None:
        """The domain this one redirects to, if any; a list of domains reads them with
        select_related("redirect_from__to_domain") to avoid a query per domain."""
        try:
            return self.redirect_from.to_domain
        except Redirect.DoesNotExist:
            return None

    @property
    def ownership_txt_name(self) -> str:
        return hostnames.ownership_txt_name(self.hostname)

    def dns_records(self, *, contested: bool) -> list[dict]:
        """The record(s) the owner must create at their DNS provider; `name` is relative to
        the registrable domain. A contested name also needs the claim's TXT record."""
        target = settings.PLATFORM_CNAME_TARGET
        if self.is_apex:
            note = (
                "Apex domain: use an ALIAS or ANAME record (some providers call it CNAME "
                "flattening). Not every DNS provider supports these."
            )
            records = [
                {"type": "ALIAS", "name": "@", "value": target, "ttl": CNAME_TTL, "note": note},
                {"type": "ANAME", "name": "@", "value": target, "ttl": CNAME_TTL, "note": note},
            ]
        else:
            records = [
                {
                    "type": "CNAME",
                    "name": hostnames.subdomain_label(self.hostname),
                    "value": target,
                    "ttl": CNAME_TTL,
                    "note": "Remove any A or AAAA record on this name; it would block the CNAME.",
                }
            ]
        if contested:
            records.append(
                {
                    "type": "TXT",
                    "name": hostnames.subdomain_label(self.ownership_txt_name),
                    "value": self.verification_token,
                    "ttl": CNAME_TTL,
                    "note": (
                        "This name is, or was, claimed by another project: this record proves "
                        "it is yours. Keep it while the domain is attached."
                    ),
                }
            )
        return records

    @cached_property
    def certificate(self) -> Certificate | None:
        """The certificate served now; read once per instance (a page shows it in three
        places), read again after `refresh_from_db()`."""
        return self.certificates.served().first()

    def refresh_from_db(self, *args: Any, **kwargs: Any) -> None:
        super().refresh_from_db(*args, **kwargs)
        self.__dict__.pop("certificate", None)

    @property
    def needs_troubleshooting(self) -> bool:
        if self.verified_at is None or self.state == State.FAILED:
            return False
        if timezone.now() - self.verified_at < TROUBLESHOOT_AFTER:
            return False
        return self.certificate is None


class Redirect(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="redirects")
    # One redirect per `from` domain; a domain belongs to one project, so this is platform-wide.
    from_domain = models.OneToOneField(
        Domain, on_delete=models.CASCADE, related_name="redirect_from"
    )
    to_domain = models.ForeignKey(Domain, on_delete=models.CASCADE, related_name="redirects_to")
    status = models.PositiveSmallIntegerField(
        choices=RedirectStatus.choices, default=RedirectStatus.MOVED_PERMANENTLY
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["from_domain__hostname"]

    def __str__(self) -> str:
        return f"{self.from_domain} -> {self.to_domain} ({self.status})"

    def as_dict(self) -> dict:
        return {
            "from": self.from_domain.hostname,
            "to": self.to_domain.hostname,
            "status": self.status,
        }


def renewal_time(not_before: datetime, not_after: datetime) -> datetime:
    """Two thirds into a certificate's own validity: 60 of 90 days for the local CA, as
    for Let's Encrypt's; a CA issuing for years is not asked again every 60 days."""
    return not_before + (not_after - not_before) * 2 / 3


class Certificate(models.Model):
    domain = models.ForeignKey(Domain, on_delete=models.CASCADE, related_name="certificates")
    serial = models.CharField(max_length=64, unique=True)
    not_before = models.DateTimeField()
    not_after = models.DateTimeField(db_index=True)
    san = models.CharField(max_length=253)
    # The leaf first, then any intermediates the CA sent.
    pem = models.TextField()
    # The private key, sealed (domains/pki/keys.py): never in clear at rest.
    key_pem = models.TextField()
    # The issuer's common name: the local CA or the ACME CA's intermediate.
    issuer = models.CharField(max_length=200, blank=True)
    # Planned from this certificate's own validity (`renewal_time`), filled on save.
    renew_after = models.DateTimeField(db_index=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = CertificateQuerySet.as_manager()

    class Meta:
        ordering = ["-not_after", "-pk"]

    def __str__(self) -> str:
        return f"{self.san} serial {self.serial}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.renew_after is None:
            self.renew_after = renewal_time(self.not_before, self.not_after)
        super().save(*args, **kwargs)


class AcmeOrder(models.Model):
    """The ACME order under way for a domain: one at a time, so a task that runs twice or
    dies halfway resumes it instead of placing another."""

    domain = models.OneToOneField(Domain, on_delete=models.CASCADE, related_name="acme_order")
    url = models.URLField(max_length=500)
    csr_pem = models.TextField()
    # The leaf's private key, sealed (domains/pki/keys.py).
    key_pem = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"ACME order for {self.domain_id}: {self.url}"


class AcmeChallenge(models.Model):
    """An HTTP-01 answer the platform serves at /.well-known/acme-challenge/<token> on the
    domain's host name until its order is done (the CA may ask several times)."""

    domain = models.ForeignKey(Domain, on_delete=models.CASCADE, related_name="acme_challenges")
    token = models.CharField(max_length=200, unique=True)
    key_authorization = models.CharField(max_length=300)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"ACME challenge {self.token} for {self.domain_id}"


class DomainEvent(models.Model):
    """The audit trail: who did what to which domain, and what the platform did."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="events")
    domain = models.ForeignKey(
        Domain, null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    hostname = models.CharField(max_length=253, blank=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    action = models.CharField(max_length=40, choices=Action.choices)
    message = models.TextField(blank=True)
    # A rival claim's line: which project added the name (never shown to the owner; one
    # line per name and rival project per day). No foreign key: deleting that project
    # leaves the line as it was.
    rival_project_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.hostname} {self.action}"


class ProvenHostname(models.Model):
    """A project proved control of a host name (its claim went live). Append-only, with no
    foreign keys, so Remove and the deletion of a project or an account leave it behind:
    the name stays contested for every other project, which then needs a TXT proof."""

    hostname = models.CharField(max_length=253, db_index=True)
    registrable_domain = models.CharField(max_length=253, db_index=True)
    project_id = models.BigIntegerField()
    owner_id = models.BigIntegerField(null=True)
    by_txt = models.BooleanField(default=False)
    proven_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-proven_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.hostname} proven by project #{self.project_id}"


class OwnerEvent(models.Model):
    """The outbox of what the owner is told: one row per event, written by the service that
    made the change, in its transaction. Each channel keeps its own progress: email in the
    `email_*` fields below (domains/notifications/), a later channel in rows of its own
    pointing here, so one event feeds them all."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="owner_events")
    domain = models.ForeignKey(
        Domain, null=True, blank=True, on_delete=models.SET_NULL, related_name="owner_events"
    )
    # Kept as text: the domain row may be gone (an expired claim, Remove).
    hostname = models.CharField(max_length=253)
    type = models.CharField(max_length=40, choices=EventType.choices)
    occurred_at = models.DateTimeField(default=timezone.now)
    # What happened and what to do in plain words, the domain page's path, and the fields
    # of the type (stops_serving_at, expires_at, reason): the body every channel sends.
    data = models.JSONField(default=dict)

    email_state = models.CharField(
        max_length=10, choices=EmailState.choices, default=EmailState.PENDING
    )
    email_attempts = models.PositiveSmallIntegerField(default=0)
    # Not sent before this (the digest window, a retry's backoff); a claim's lease end.
    email_due_at = models.DateTimeField(default=timezone.now)
    email_claim = models.UUIDField(null=True, blank=True)
    emailed_at = models.DateTimeField(null=True, blank=True)

    objects = OwnerEventQuerySet.as_manager()

    class Meta:
        ordering = ["-occurred_at", "-pk"]
        indexes = [
            models.Index(
                fields=["email_state", "email_due_at"], name="domains_owner_event_email_due"
            ),
            models.Index(
                fields=["project", "hostname", "type"], name="domains_owner_event_subject"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.occurred_at:%Y-%m-%d %H:%M} {self.hostname} {self.type}"


def default_email_events() -> list[str]:
    return sorted(ACTION_NEEDED_EVENTS)


class NotificationPreference(models.Model):
    """Which events reach a user by email (Settings → Notifications); a user without a row
    gets the default: everything that needs action."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_preference"
    )
    email_events = models.JSONField(default=default_email_events)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"notifications of {self.user_id}"


class WebhookEndpoint(models.Model):
    """An HTTPS address of the project's that receives the events it chose, signed with its
    secret (Standard Webhooks; domains/webhooks/). The secret is kept as-is: the process
    that signs must read it, and it is the receiver's secret as much as ours
    (docs/decisions/webhooks.md)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="webhooks")
    url = models.CharField(max_length=2000)
    events = models.JSONField(default=list)
    secret = models.CharField(max_length=100)
    created_at = models.DateTimeField(default=timezone.now)
    disabled_at = models.DateTimeField(null=True, blank=True)
    # The first failed attempt since the last success: WEBHOOK_DISABLE_AFTER later, disabled.
    failing_since = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.project_id} {self.url}"

    @property
    def enabled(self) -> bool:
        return self.disabled_at is None


class WebhookDelivery(models.Model):
    """One owner event for one endpoint: its attempts so far and the last one's answer.
    Claimed with a conditional UPDATE (domains/webhooks/delivery.py)."""

    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    event = models.ForeignKey(OwnerEvent, on_delete=models.CASCADE, related_name="deliveries")
    state = models.CharField(
        max_length=10, choices=DeliveryState.choices, default=DeliveryState.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    # The next attempt's time; while sending, the end of the claim's lease.
    next_attempt_at = models.DateTimeField(default=timezone.now)
    claim = models.UUIDField(null=True, blank=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    # The first bytes of the answer, or why there was none (a timeout, a refused address).
    response = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    attempted_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "event"], name="domains_webhook_delivery_once"
            )
        ]
        indexes = [
            models.Index(fields=["state", "next_attempt_at"], name="domains_webhook_due"),
        ]

    def __str__(self) -> str:
        return f"{self.endpoint_id} {self.event_id} {self.state}"

    @property
    def message_id(self) -> str:
        """The `webhook-id`: the event's, the same on every attempt and every endpoint
        (a receiver dedupes on it)."""
        return f"evt_{self.event_id}"
