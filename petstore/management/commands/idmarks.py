from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from petstore.backups import afterrestore
from petstore.backups.records import BackupError


class Command(BaseCommand):
    help = (
        "Before a restore, with the platform stopped on every host: write how far each "
        "sequence of the database went (PETSTORE_VAR_DIR/id-marks.json), for `manage.py "
        "afterrestore` to move them past it. docs/operators/backups.md."
    )

    def handle(self, *args, **options):
        path = afterrestore.marks_path()
        try:
            marks = afterrestore.take_marks(path)
        except BackupError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Marks of {len(marks)} sequences written: {path}.")
