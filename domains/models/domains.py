"""Custom domains: a project's claims on host names, its redirects between them, and the
proofs of control that outlive the claims."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta
from functools import reduce
from operator import or_
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.functional import cached_property
from django.utils.translation import gettext as _

from domains.choices import CERT_STATES, LIVE_STATES, CertState, RedirectStatus, State
from domains.dns import hostnames
from domains.models.projects import Project
from domains.querysets import DomainQuerySet
from petstore import sentences

if TYPE_CHECKING:
    from domains.models.certificates import Certificate

# How long after verification a missing certificate becomes something to troubleshoot (spec).
TROUBLESHOOT_AFTER = timedelta(minutes=30)
CNAME_TTL = 3600
# The label under PLATFORM_DOMAIN where the wildcards' DNS-01 names live (acme_challenge_target).
ACME_LABEL = "acme"


def new_verification_token() -> str:
    return secrets.token_hex(16)


def acme_challenge_target(verification_token: str) -> str:
    """Domain.acme_challenge_target of the claim with this secret."""
    digest = hashlib.sha256(f"acme-challenge:{verification_token}".encode())
    platform = hostnames.comparable(settings.PLATFORM_DOMAIN)
    return f"{digest.hexdigest()[:32]}.{ACME_LABEL}.{platform}"


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
    # The message and each finding of check_diagnosis as sentences to read in any language
    # ({message, findings}: petstore/sentences.py); empty on a row checked before sentences
    # were kept, whose message and findings are shown as they are.
    check_said = models.JSONField(null=True, blank=True)
    check_expected = models.CharField(max_length=500, blank=True)
    check_found = models.CharField(max_length=500, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)
    # What the zone's own name servers said at the last check that asked them (one of a
    # domain not live yet, or a failing one of a live domain): domains/dns/doctor.py's
    # diagnosis, {checked_at, nameservers, findings}; null when that check did not ask.
    check_diagnosis = models.JSONField(null=True, blank=True)
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
    cert_said = models.JSONField(null=True, blank=True)  # as check_said

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
        # The sweep's other stages each look for a few rows among all (claims never verified,
        # certificate work requested and not done, certificates not asked for): partial
        # indexes on those rows alone, so a sweep among many active domains reads none of them.
        indexes = [
            models.Index(
                fields=["created_at"],
                condition=models.Q(verified_at__isnull=True),
                name="domains_never_verified",
            ),
            models.Index(
                fields=["cert_requested_at"],
                condition=models.Q(state=State.ISSUING),
                name="domains_issuing",
            ),
            models.Index(
                fields=["verified_at"],
                condition=models.Q(state=State.VERIFIED, cert_state=CertState.NONE),
                name="domains_needing_certificate",
            ),
        ]

    def __str__(self) -> str:
        return self.hostname

    @property
    def hostname_unicode(self) -> str:
        return hostnames.to_unicode(self.hostname)

    @property
    def check_message_shown(self) -> str:
        """The last check's message in the reader's language."""
        return sentences.shown(self.check_message, (self.check_said or {}).get("message"))

    @property
    def findings_shown(self) -> list[str]:
        """The last check's findings (check_diagnosis) in the reader's language."""
        found = (self.check_diagnosis or {}).get("findings", [])
        kept = (self.check_said or {}).get("findings") or [None] * len(found)
        return [
            sentences.shown(finding["message"], said)
            for finding, said in zip(found, kept, strict=False)
        ]

    @property
    def cert_message_shown(self) -> str:
        """The certificate's last problem in the reader's language."""
        return sentences.shown(self.cert_message, self.cert_said)

    @property
    def is_live(self) -> bool:
        return self.state in LIVE_STATES

    @property
    def https_url(self) -> str:
        """Where visitors reach it once active: the edge's HTTPS, on HTTPS_PORT unless 443."""
        port = "" if settings.HTTPS_PORT == 443 else f":{settings.HTTPS_PORT}"
        return f"https://{self.hostname}{port}/"

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

    @property
    def is_wildcard(self) -> bool:
        return hostnames.is_wildcard(self.hostname)

    @property
    def acme_challenge_target(self) -> str:
        """Where a wildcard's `_acme-challenge` CNAME points: a name under
        `acme.PLATFORM_DOMAIN` (a reserved slug: no project has it) that is this claim's
        alone, whose TXT record the platform writes through its DNS-01 provider. Derived from
        the claim's own secret, so no two claims, of one tenant or two, share it; one-way, so
        it does not spell out the claim's TXT value."""
        return acme_challenge_target(self.verification_token)

    def dns_records(self, *, contested: bool) -> list[dict]:
        """The record(s) the owner must create at their DNS provider; `name` is relative to
        the registrable domain. A contested name also needs the claim's TXT record. The notes
        are in the active language (the API's is English)."""
        target = settings.PLATFORM_CNAME_TARGET
        if self.is_apex:
            note = _(
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
                    "note": _(
                        "Remove any A or AAAA record on this name; it would block the CNAME."
                    ),
                }
            ]
        if self.is_wildcard:
            records.append(
                {
                    "type": "CNAME",
                    "name": hostnames.subdomain_label(hostnames.acme_challenge_name(self.hostname)),
                    "value": self.acme_challenge_target,
                    "ttl": CNAME_TTL,
                    "note": _(
                        "Lets the platform prove this wildcard to the certificate authority "
                        "(DNS-01): the platform writes the record this name points to. Keep it "
                        "while the domain is attached."
                    ),
                }
            )
        if contested:
            records.append(
                {
                    "type": "TXT",
                    "name": hostnames.subdomain_label(self.ownership_txt_name),
                    "value": self.verification_token,
                    "ttl": CNAME_TTL,
                    "note": _(
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


class ProvenHostname(models.Model):
    """A project proved control of a host name (its claim went live). Append-only, with no
    foreign keys, so Remove and the deletion of a project or an account leave it behind:
    the name stays contested for every other project, which then needs a TXT proof."""

    hostname = models.CharField(max_length=253, db_index=True)
    registrable_domain = models.CharField(max_length=253)
    project_id = models.BigIntegerField()
    owner_id = models.BigIntegerField(null=True)
    by_txt = models.BooleanField(default=False)
    proven_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-proven_at", "-pk"]
        indexes = [
            # Who proved names of a registrable domain (selectors.contested_claims), read
            # from the index alone.
            models.Index(
                fields=["registrable_domain", "project_id"], name="domains_proven_domain_project"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.hostname} proven by project #{self.project_id}"
