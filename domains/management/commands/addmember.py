"""Staff add an existing user to a project directly, with a role: no invitation."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from domains.choices import Role
from domains.management.commands._base import get_project, get_role, refusal
from domains.services.members import member_add
from petstore.management.staff import StaffCommand


class Command(StaffCommand):
    help = "Add the existing user USERNAME to the project SLUG with --role."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("username")
        parser.add_argument("--role", required=True, help=", ".join(Role.values))

    def handle(self, *args, slug, username, role, **options):
        project, role = get_project(slug), get_role(role)
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(
                f"No user {username!r}; `manage.py invitemember {slug} EMAIL --role {role}` "
                "invites someone without an account."
            )
        try:
            member_add(project=project, user=user, role=role, actor=None)
        except ValidationError as exc:
            raise refusal(exc) from None
        self.stdout.write(f"Added {username} to {project.slug} as {role}.")
