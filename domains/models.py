"""Projects, their deploys, custom domains, redirects, certificates and events.

The rules that change these rows live in domains/services/; the moves between a
domain's states in domains/services/lifecycle.py; every enumerated value in
domains/choices.py; reusable reads in domains/querysets.py.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.functional import cached_property

from domains.choices import (
    LIVE_STATES,
    PAID_PLANS,
    Action,
    CertState,
    Plan,
    RedirectStatus,
    State,
)
from domains.dns import hostnames
from domains.querysets import CertificateQuerySet, DomainQuerySet, ProjectQuerySet

# How long after verification a missing certificate becomes something to troubleshoot (spec).
TROUBLESHOOT_AFTER = timedelta(minutes=30)
CNAME_TTL = 3600


class Project(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="projects"
    )
    slug = models.SlugField(max_length=63, unique=True)
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


class Domain(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="domains")
    # ASCII (IDNA) form, lower case, no trailing dot; unique across the whole platform.
    hostname = models.CharField(max_length=253, unique=True)
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

    # The certificate side: its state, when it was requested, and the last problem.
    cert_state = models.CharField(max_length=20, choices=CertState.choices, default=CertState.NONE)
    cert_requested_at = models.DateTimeField(null=True, blank=True)
    cert_code = models.CharField(max_length=40, blank=True)
    cert_message = models.TextField(blank=True)

    created_at = models.DateTimeField(default=timezone.now)

    objects = DomainQuerySet.as_manager()

    class Meta:
        ordering = ["hostname"]

    def __str__(self) -> str:
        return self.hostname

    @property
    def hostname_unicode(self) -> str:
        return hostnames.to_unicode(self.hostname)

    @property
    def is_live(self) -> bool:
        return self.state in LIVE_STATES

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

    def dns_records(self) -> list[dict]:
        """The record(s) the owner must create at their DNS provider."""
        target = settings.PLATFORM_CNAME_TARGET
        if self.is_apex:
            note = (
                "Apex domain: use an ALIAS or ANAME record (some providers call it CNAME "
                "flattening). Not every DNS provider supports these."
            )
            return [
                {"type": "ALIAS", "name": "@", "value": target, "ttl": CNAME_TTL, "note": note},
                {"type": "ANAME", "name": "@", "value": target, "ttl": CNAME_TTL, "note": note},
            ]
        return [
            {
                "type": "CNAME",
                "name": hostnames.subdomain_label(self.hostname),
                "value": target,
                "ttl": CNAME_TTL,
                "note": "Remove any A or AAAA record on this name; it would block the CNAME.",
            }
        ]

    @cached_property
    def certificate(self) -> Certificate | None:
        """The certificate served now; read once per instance (a page shows it in three
        places), read again after `refresh_from_db()`."""
        return self.certificates.current().order_by("-not_after", "-pk").first()

    def refresh_from_db(self, *args, **kwargs) -> None:
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


class Certificate(models.Model):
    domain = models.ForeignKey(Domain, on_delete=models.CASCADE, related_name="certificates")
    serial = models.CharField(max_length=64, unique=True)
    not_before = models.DateTimeField()
    not_after = models.DateTimeField(db_index=True)
    san = models.CharField(max_length=253)
    pem = models.TextField()
    key_pem = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    objects = CertificateQuerySet.as_manager()

    class Meta:
        ordering = ["-not_after", "-pk"]

    def __str__(self) -> str:
        return f"{self.san} serial {self.serial}"


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
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.hostname} {self.action}"
