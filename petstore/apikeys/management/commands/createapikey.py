from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from petstore.apikeys.services import api_key_issue_for_username


class Command(BaseCommand):
    help = (
        "Issue an API key for USERNAME (creating the user if needed). The key is printed "
        "once, alone on the last line of stdout; only its hash is stored."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="default", help="A label for the key.")

    def handle(self, *args: Any, username: str, name: str, **options: Any) -> None:
        if not username.strip():
            raise CommandError("USERNAME must not be blank")
        issued, created = api_key_issue_for_username(username=username, name=name)
        if created:
            self.stdout.write(f"Created user {username!r}.")
        self.stdout.write(
            f"API key {issued.api_key.display_prefix} ({name!r}) for {username!r}. "
            "Store it now: it is not shown again. Use it as `Authorization: Bearer <key>`."
        )
        self.stdout.write(issued.plaintext)
