"""`manage.py createapikey USER [--project SLUG] [--scope SCOPE]... [--expires DAYS]`: a key
for USER (created, without a password, if there is none), printed once, alone on the last
line. Its scopes never exceed USER's role (domains/services/keys.py)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.db import transaction

from domains.management.commands._base import refusal
from domains.services.keys import key_create, key_project
from petstore.apikeys.models import DEFAULT_KEY_DAYS, MAX_KEY_DAYS
from petstore.apikeys.scopes import ALL_SCOPES
from petstore.management.staff import StaffCommand


class Command(StaffCommand):
    help = (
        "Issue an API key for USER (creating the user if needed). The key is printed once, "
        "alone on the last line of stdout; only its hash is stored."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("username", metavar="USER")
        parser.add_argument("--name", default="default", help="A label for the key.")
        parser.add_argument(
            "--project",
            metavar="SLUG",
            help="Limit the key to this project of USER's (default: all of USER's projects).",
        )
        parser.add_argument(
            "--scope",
            action="append",
            dest="scopes",
            metavar="SCOPE",
            help=(
                "A scope of the key; repeat for several (default: every scope USER's role "
                f"allows). One of: {', '.join(sorted(ALL_SCOPES))}."
            ),
        )
        parser.add_argument(
            "--expires",
            type=int,
            default=DEFAULT_KEY_DAYS,
            metavar="DAYS",
            help=f"Days until the key ends (default {DEFAULT_KEY_DAYS}, at most {MAX_KEY_DAYS}).",
        )

    def handle(
        self,
        *args: Any,
        username: str,
        name: str,
        project: str | None,
        scopes: list[str] | None,
        expires: int,
        **options: Any,
    ) -> None:
        if not username.strip():
            raise CommandError("USER must not be blank.")
        if not 1 <= expires <= MAX_KEY_DAYS:
            raise CommandError(
                f"--expires {expires} is out of range: a key lasts 1 to {MAX_KEY_DAYS} days."
            )
        try:
            with transaction.atomic():
                user, created = get_user_model().objects.get_or_create(username=username)
                if created:
                    user.set_unusable_password()
                    user.save(update_fields=["password"])
                limited = key_project(user=user, slug=project) if project is not None else None
                issued = key_create(
                    user=user, name=name, project=limited, scopes=scopes, days=expires
                )
        except ValidationError as exc:
            raise refusal(exc) from None
        key = issued.api_key
        if created:
            self.stdout.write(f"Created user {username!r}.")
        self.stdout.write(
            f"API key {key.display_prefix} ({name!r}) for {username!r}, "
            f"{'on ' + project if project else 'on all of their projects'}, "
            f"scopes {' '.join(key.scopes)}; expires {key.expires_at:%Y-%m-%d %H:%M} UTC. "
            "Store it now: it is not shown again. Use it as `Authorization: Bearer <key>`."
        )
        self.stdout.write(issued.plaintext)
