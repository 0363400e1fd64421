"""Staff invite someone by email to a project: the mail goes, and the link is printed."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from domains.choices import Role
from domains.management.commands._base import get_project, get_role, refusal
from domains.services.invitations import member_invite
from petstore.management.staff import StaffCommand


class Command(StaffCommand):
    help = "Invite EMAIL to the project SLUG with --role; prints the invitation's link."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("email")
        parser.add_argument("--role", required=True, help=", ".join(Role.values))

    def handle(self, *args, slug, email, role, **options):
        project, role = get_project(slug), get_role(role)
        try:
            invited = member_invite(project=project, email=email, role=role, actor=None)
        except ValidationError as exc:
            raise refusal(exc) from None
        invitation = invited.invitation
        self.stdout.write(
            f"Invited {invitation.email} to {project.slug} as {role}; the link works once, "
            f"until {invitation.expires_at:%Y-%m-%d %H:%M} UTC:\n{invited.link}"
        )
