from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from petstore.env import DECLARED
from petstore.settingsreference import env_example, reference


def written() -> dict[Path, str]:
    """Each file the declarations write, with its text."""
    declared = list(DECLARED.values())
    return {
        settings.BASE_DIR / "docs" / "configuration.md": reference(declared),
        settings.BASE_DIR / ".env.example": env_example(declared),
    }


class Command(BaseCommand):
    help = (
        "Write docs/configuration.md and .env.example from the settings' declarations "
        "(petstore/settings/); --check only tells which of them differ."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--check", action="store_true", help="Write nothing; fail if a file differs."
        )

    def handle(self, *args, check: bool, **options):
        stale = []
        for path, text in written().items():
            if path.exists() and path.read_text() == text:
                continue
            stale.append(path.name)
            if not check:
                path.write_text(text)
                self.stdout.write(f"Wrote {path.relative_to(settings.BASE_DIR)}")
        if check and stale:
            raise CommandError(
                f"{', '.join(stale)} differ from the settings' declarations: run "
                "`manage.py settingsreference`"
            )
