"""`make run`'s demo for the domains dashboard: an owner, two projects, a starter zone.

Idempotent: a second run changes nothing and prints the same sign-in. The
owner's password is random, made on the first run and kept in
var/demo-owner-password (mode 0600), so no password lives in the code.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from devtools.starterzones import DEMO_DOMAIN, demo_zone_file, write_starter_zones
from domains import pki
from domains.choices import Plan
from domains.models import Project
from domains.services.projects import deploy_record, project_create

USERNAME = "demo"
# Where the demo's owner mail goes: under DEBUG the console backend prints it in the
# worker's output, so `make run` shows the mail an owner would get.
EMAIL = "demo@example.test"
DEMO_HTML = (
    "<!doctype html><title>Demo shop</title>"
    "<h1>Demo shop</h1><p>Published by the Petstore platform.</p>"
)


class Command(BaseCommand):
    help = "Create the demo owner, a Pro project with a deploy, a Free one, and a starter zone."

    def add_arguments(self, parser):
        parser.add_argument(
            "--force",
            action="store_true",
            help="Run even with DEBUG off (it creates a user with a known password).",
        )

    def handle(self, *args, force: bool = False, **options):
        if not settings.DEBUG and not force:
            raise CommandError(
                "loaddomainsdemo is for development (DEBUG=1: PETSTORE_ENV_FILE=var/local.env); "
                "use --force."
            )
        user, password = self._owner()
        shop = self._project("demo-shop", "Demo shop", Plan.PRO, user)
        if shop.latest_deploy is None:
            deploy_record(project=shop, html=DEMO_HTML)
        # Its plan is the badge beside its name on every page: not in the name again.
        self._project("demo-sketch", "Demo sketch", Plan.FREE, user)
        zone_file = self._zone()

        self.stdout.write(self.style.SUCCESS("Domains dashboard demo ready."))
        port = os.environ.get("PORT", "8000")
        self.stdout.write(f"  Sign in at http://localhost:{port}/accounts/login/")
        self.stdout.write(f"  username: {USERNAME}")
        self.stdout.write(f"  password: {password}")
        self.stdout.write(
            f"  owner mail to: {user.email} (read at http://localhost:{port}/dev/mail/)"
        )
        self.stdout.write(f"  Dev DNS zone file: {zone_file} (see docs/dashboard.md)")
        self._https_hint()

    def _https_hint(self) -> None:
        """How to reach the demo domain through the TLS edge, trusting the local CA."""
        port = settings.HTTPS_PORT
        origin = f"https://{DEMO_DOMAIN}" + ("" if port == 443 else f":{port}")
        self.stdout.write(f"  HTTPS, once {DEMO_DOMAIN} is Active: {origin}/")
        if settings.DOMAINS_CA == "local":
            root = pki.root_certificate_path()
            self.stdout.write(f"    local CA root (trust it to verify): {root}")
            self.stdout.write(
                f"    curl --resolve {DEMO_DOMAIN}:{port}:127.0.0.1 --cacert {root} {origin}/"
            )

    def _owner(self):
        secret_file = Path(settings.VAR_DIR) / "demo-owner-password"
        users = get_user_model()
        user = users.objects.filter(username=USERNAME).first()
        password = secret_file.read_text().strip() if secret_file.exists() else ""
        if user is None or not password or not user.check_password(password):
            password = secrets.token_urlsafe(12)
            fd = os.open(secret_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(password + "\n")
            if user is None:
                user = users.objects.create_user(USERNAME, email=EMAIL, password=password)
            else:
                user.set_password(password)
                user.save(update_fields=["password"])
        if not user.email:  # the owner's mail needs an address; one the developer set stays
            user.email = EMAIL
            user.save(update_fields=["email"])
        return user, password

    def _project(self, slug: str, name: str, plan: str, owner) -> Project:
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            project = project_create(slug=slug, owner=owner, plan=plan, name=name)
        elif project.owner_id != owner.pk:
            raise CommandError(f"The project {slug!r} exists and belongs to someone else.")
        return project

    def _zone(self) -> Path:
        zones = Path(settings.DOMAINS_DEV_DNS_ZONES)
        write_starter_zones(zones)  # never over the newcomer's edits
        return demo_zone_file(zones)
