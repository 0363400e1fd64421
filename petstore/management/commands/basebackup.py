from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from petstore.backups import pitr
from petstore.backups.records import BackupError


class Command(BaseCommand):
    help = (
        "Take pgBackRest's base backup of the cluster (run as its owner, by "
        "petstore-backup.timer) and record its success: full when the newest full one is "
        "older than --full-every days, differential otherwise. docs/operators/backups.md."
    )

    def add_arguments(self, parser):
        parser.add_argument("--stanza", default=pitr.DEFAULT_STANZA)
        parser.add_argument(
            "--type", dest="backup_type", choices=pitr.TYPES, help="Force this backup type."
        )
        parser.add_argument(
            "--full-every",
            type=float,
            default=pitr.DEFAULT_FULL_EVERY_DAYS,
            metavar="DAYS",
            help=f"Days between full backups (default {pitr.DEFAULT_FULL_EVERY_DAYS}).",
        )
        parser.add_argument("--pgbackrest", metavar="PATH", help="Default: pgbackrest on PATH.")

    def handle(self, *args, stanza, backup_type, full_every, pgbackrest, **options):
        try:
            taken = pitr.base_backup(
                stanza=stanza,
                backup_type=backup_type,
                full_every_days=full_every,
                pgbackrest=pgbackrest,
            )
        except BackupError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Base backup taken: {taken} of stanza {stanza}.")
