"""Certificates and the ACME work that gets them: the order under way and its challenges."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.utils import timezone

from domains.choices import PlatformKeyUse
from domains.policy import renewal_time
from domains.querysets import CertificateQuerySet

# Domain is named, not imported: domains.models.domains imports Certificate (the type of
# `Domain.certificate`), and an import each way would be a cycle
# (tests/repository/test_architecture.py).


class Certificate(models.Model):
    domain = models.ForeignKey("Domain", on_delete=models.CASCADE, related_name="certificates")
    serial = models.CharField(max_length=64, unique=True)
    not_before = models.DateTimeField()
    not_after = models.DateTimeField(db_index=True)
    san = models.CharField(max_length=253)
    # The leaf first, then any intermediates the CA sent.
    pem = models.TextField()
    # The private key, sealed (domains/pki/sealing.py): never in clear at rest.
    key_pem = models.TextField()
    # The issuer's common name: the local CA or the ACME CA's intermediate.
    issuer = models.CharField(max_length=200, blank=True)
    # The CA that issued it, its ACME directory URL (renewal asks it first, and its renewal
    # window is read from it); empty: the local CA, or a certificate stored before the CA
    # was recorded, read as the first of DOMAINS_ACME_DIRECTORIES.
    ca_directory = models.CharField(max_length=500, blank=True, default="", db_default="")
    # The CA's suggested window (ACME Renewal Information) when it offers one, else planned
    # from this certificate's own validity (domains.policy.renewal_time, filled on save).
    renew_after = models.DateTimeField(db_index=True)
    # When to read the CA's window for this certificate again (it may move it earlier:
    # services.certificates.renewal_windows_refresh); null: at the next renewal run.
    renewal_info_at = models.DateTimeField(null=True, blank=True, db_index=True)
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

    domain = models.OneToOneField("Domain", on_delete=models.CASCADE, related_name="acme_order")
    # The CA the order is at, its directory URL (a run resumes it there, whatever the
    # order of DOMAINS_ACME_DIRECTORIES); empty: placed before it was recorded, at the first.
    directory = models.CharField(max_length=500, blank=True, default="", db_default="")
    url = models.URLField(max_length=500)
    csr_pem = models.TextField()
    # The leaf's private key, sealed (domains/pki/sealing.py).
    key_pem = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"ACME order for {self.domain_id}: {self.url}"


class AcmeChallenge(models.Model):
    """An HTTP-01 answer the platform serves at /.well-known/acme-challenge/<token> on the
    domain's host name until its order is done (the CA may ask several times)."""

    domain = models.ForeignKey("Domain", on_delete=models.CASCADE, related_name="acme_challenges")
    token = models.CharField(max_length=200, unique=True)
    key_authorization = models.CharField(max_length=300)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"ACME challenge {self.token} for {self.domain_id}"


class PlatformKey(models.Model):
    """A private key of the platform's own, sealed: the ACME account's, the local CA's (with
    its certificate). In the database, not on one host's disk, so every certificates worker
    on any host signs with the same ones (one ACME account, whose orders any of them can
    resume) and a restart on an empty disk registers nothing new (domains/pki/platformkeys.py)."""

    use = models.CharField(max_length=20, choices=PlatformKeyUse.choices, unique=True)
    # Sealed (domains/pki/sealing.py), like every private key the platform keeps.
    key_pem = models.TextField()
    # The local CA's own certificate, public; empty for the ACME account.
    certificate_pem = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.get_use_display()
