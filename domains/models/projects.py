"""Projects and their deploys: what a domain serves."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from domains.choices import PAID_PLANS, Plan
from domains.policy import RESERVED_PROJECT_SLUGS
from domains.querysets import ProjectQuerySet


def validate_project_slug(slug: str) -> None:
    if slug.lower() in RESERVED_PROJECT_SLUGS:
        raise ValidationError(
            f"{slug!r} is reserved: {slug}.{settings.PLATFORM_DOMAIN} must never look like "
            "the platform's own. Choose another slug.",
            code="reserved_slug",
        )


class Project(models.Model):
    """A published project. Its people and their roles are its memberships
    (domains/models/members.py); what each role may do is domains/access.py's."""

    # Compatibility shim (drop in 1.3.0): release 1.1.0's processes find a project's people
    # through this column while they run beside this release, so it still names an owner
    # (the one who made the project, or who it was transferred to); nothing of this release
    # reads it. A user's deletion no longer takes their projects with it.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="projects",
    )
    slug = models.SlugField(max_length=63, unique=True, validators=[validate_project_slug])
    name = models.CharField(max_length=200, blank=True)
    plan = models.CharField(max_length=20, choices=Plan.choices, default=Plan.FREE)
    primary_domain = models.ForeignKey(
        "Domain", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    objects = ProjectQuerySet.as_manager()
    # The member's role, on a project read through `Project.objects.for_member()`.
    role: str

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
