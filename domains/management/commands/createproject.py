from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction

from domains.choices import Plan
from domains.management.commands._base import refusal
from domains.services.projects import deploy_record, project_create
from petstore.management.staff import StaffCommand

DEFAULT_PAGE = "<!doctype html><title>{slug}</title><h1>{slug}</h1><p>Published on Petstore.</p>"


class Command(StaffCommand):
    help = "Create a project (and its owner if needed); --deployed records a successful deploy."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--owner", required=True, help="username; created if missing")
        parser.add_argument("--plan", default=Plan.FREE, choices=Plan.values)
        parser.add_argument("--name", default="")
        parser.add_argument("--deployed", action="store_true", help="record a successful deploy")

    @transaction.atomic
    def handle(self, *args, slug, owner, plan, name, deployed, **options):
        user, created = get_user_model().objects.get_or_create(username=owner)
        try:
            project = project_create(slug=slug, owner=user, plan=plan, name=name)
        except ValidationError as exc:
            raise refusal(exc) from None
        if deployed:
            deploy_record(project=project, html=DEFAULT_PAGE.format(slug=slug))
        self.stdout.write(
            f"Created project {project.slug} ({project.get_plan_display()}) owned by {owner}"
            f"{' (new user)' if created else ''}; published at {project.platform_host}"
            f"{'' if deployed else ' once deployed'}."
        )
