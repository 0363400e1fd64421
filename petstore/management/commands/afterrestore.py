from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from petstore.backups import afterrestore
from petstore.backups.records import BackupError


class Command(BaseCommand):
    help = (
        "After a restore, before the platform starts: end every session, move every sequence "
        "past every id handed out (the marks of `manage.py idmarks`, plus --gap), empty the "
        "broker. docs/operators/backups.md."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--gap",
            type=int,
            metavar="N",
            help=f"Added past the highest id known (default {afterrestore.DEFAULT_GAP}); "
            "required when there are no marks.",
        )

    def handle(self, *args, gap: int | None, **options):
        if gap is not None and gap < 0:
            raise CommandError("--gap is 0 or more.")
        try:
            report = afterrestore.after_restore(marks_file=afterrestore.marks_path(), gap=gap)
        except BackupError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Sessions ended: {report.sessions_ended}.")
        for name, (before, after) in report.moved.items():
            was = "-" if before is None else before
            self.stdout.write(f"Sequence {name}: {was} -> {after}.")
        self.stdout.write(f"Broker emptied: {report.broker_keys_flushed} keys.")
