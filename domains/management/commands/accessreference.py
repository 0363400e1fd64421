from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from domains.accessreference import rewritten

PAGE = "docs/decisions/access.md"


class Command(BaseCommand):
    help = (
        f"Write the role × permission matrix of {PAGE} from domains/access.py; --check only "
        "tells whether it differs."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--check", action="store_true", help="Write nothing; fail if the page differs."
        )

    def handle(self, *args, check: bool, **options):
        path = settings.BASE_DIR / PAGE
        page = path.read_text()
        try:
            text = rewritten(page)
        except ValueError as exc:
            raise CommandError(f"{PAGE}: {exc}") from None
        if text == page:
            return
        if check:
            raise CommandError(
                f"{PAGE} differs from domains/access.py: run `manage.py accessreference`"
            )
        path.write_text(text)
        self.stdout.write(f"Wrote {PAGE}")
