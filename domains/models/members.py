"""A project's people: its members and their roles, the invitations not yet accepted, and
the API keys limited to one project. What each role may do is domains/access.py's."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from domains.choices import Role
from domains.models.projects import Project
from petstore.apikeys.models import ApiKey


class Membership(models.Model):
    """One user's role on one project. A project always keeps at least one owner
    (domains/services/members.py decides every change under a lock on the project)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=20, choices=Role.choices)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="domains_member_once"),
            models.CheckConstraint(
                condition=Q(role__in=Role.values), name="domains_member_role_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project_id} {self.user_id} {self.role}"


class InvitationQuerySet(models.QuerySet):
    def pending(self, now=None) -> InvitationQuerySet:
        """Invitations whose link still works: not accepted, revoked or expired."""
        return self.filter(
            accepted_at__isnull=True,
            revoked_at__isnull=True,
            expires_at__gt=now or timezone.now(),
        )


class Invitation(models.Model):
    """An invitation by email to join a project with a role. Only a SHA-256 of the link's
    secret is kept; the link is good once, until `expires_at`."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=20, choices=Role.choices)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = InvitationQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(role__in=Role.values), name="domains_invitation_role_valid"
            ),
            # One open invitation per address and project: inviting again replaces it.
            models.UniqueConstraint(
                fields=["project", "email"],
                condition=Q(accepted_at__isnull=True, revoked_at__isnull=True),
                name="domains_invitation_open_once",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project_id} {self.email} {self.role}"

    def is_open(self, now=None) -> bool:
        now = now or timezone.now()
        return self.accepted_at is None and self.revoked_at is None and self.expires_at > now


class ProjectKey(models.Model):
    """An API key limited to one project: it reaches no other, whatever its user may."""

    api_key = models.OneToOneField(
        ApiKey, primary_key=True, on_delete=models.CASCADE, related_name="project_binding"
    )
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")

    def __str__(self) -> str:
        return f"{self.api_key_id} -> {self.project_id}"
