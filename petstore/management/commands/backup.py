from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from petstore.database.backup import BackupError, dump


class Command(BaseCommand):
    help = (
        "Write a backup of the database (pg_dump --format=custom of DATABASE_URL) to FILE, "
        "which must not exist. Keep DOMAINS_KEY_ENCRYPTION_KEY with it: without the key "
        "the private keys in it cannot be opened. Restore: docs/operators/backups.md."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="The backup file to write; refused if it exists.")
        parser.add_argument(
            "--pg-dump",
            metavar="PATH",
            help="The pg_dump to run (default: pg_dump on PATH), of the server's version or newer.",
        )

    def handle(self, *args, file: str, pg_dump: str | None, **options):
        target = Path(file)
        try:
            size = dump(target=target, pg_dump=pg_dump)
        except BackupError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Backup written: {target} ({size} bytes).")
