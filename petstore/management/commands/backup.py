from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from petstore.backups.logical import BackupError, dump


class Command(BaseCommand):
    help = (
        "Write a logical copy of the database (pg_dump --format=custom of DATABASE_URL) to "
        "FILE, which must not exist, 0600 from its creation; sealed with a passphrase with "
        "--encrypt. Keep DOMAINS_KEY_ENCRYPTION_KEY with it: without the key the private keys "
        "in it cannot be opened. Point-in-time recovery is pgBackRest's (manage.py "
        "basebackup). Restore: docs/operators/backups.md."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="The backup file to write; refused if it exists.")
        parser.add_argument(
            "--pg-dump",
            metavar="PATH",
            help="The pg_dump to run (default: the one of the server's major version found "
            "on this host, else the oldest newer one).",
        )
        parser.add_argument(
            "--encrypt",
            metavar="PASSPHRASE_FILE",
            help="Seal the copy (AES-256-GCM, the key derived by scrypt) with the passphrase "
            "on this file's first line; manage.py openbackup opens it.",
        )

    def handle(self, *args, file: str, pg_dump: str | None, encrypt: str | None, **options):
        target = Path(file)
        try:
            size = dump(target=target, pg_dump=pg_dump, passphrase_file=encrypt)
        except BackupError as exc:
            raise CommandError(str(exc)) from None
        sealed = ", sealed" if encrypt else ""
        self.stdout.write(f"Backup written: {target} ({size} bytes{sealed}).")
