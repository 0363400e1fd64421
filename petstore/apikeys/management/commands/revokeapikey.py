from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from petstore.apikeys.keyformat import KEY_SCHEME
from petstore.apikeys.models import ApiKey
from petstore.apikeys.services import api_key_revoke


class Command(BaseCommand):
    help = (
        "Revoke the API key with this prefix (`pst_1a2b3c4d` as the admin shows it, or "
        "`1a2b3c4d`). Every process refuses it from the next request on."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("prefix")

    def handle(self, *args: Any, prefix: str, **options: Any) -> None:
        prefix = prefix.strip().removeprefix(f"{KEY_SCHEME}_")
        api_key = ApiKey.objects.select_related("user").filter(prefix=prefix).first()
        if api_key is None:
            raise CommandError(f"No API key with prefix {prefix!r}.")
        if not api_key_revoke(api_key=api_key):
            raise CommandError(f"API key {api_key.display_prefix} was already revoked.")
        self.stdout.write(f"Revoked API key {api_key.display_prefix} of {api_key.user}.")
