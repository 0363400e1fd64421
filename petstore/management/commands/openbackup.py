from __future__ import annotations

import os
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from petstore.backups import sealing


class Command(BaseCommand):
    help = (
        "Open a copy sealed by `manage.py backup --encrypt`: its pg_dump file into OUTPUT "
        "(0600, refused if it exists), or to standard output with `-` (`| pg_restore ...`)."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="The sealed backup.")
        parser.add_argument("output", help="The file to write, or - for standard output.")
        parser.add_argument(
            "--passphrase-file", required=True, metavar="PATH", help="The passphrase's file."
        )

    def handle(self, *args, file: str, output: str, passphrase_file: str, **options):
        try:
            passphrase = sealing.read_passphrase(passphrase_file)
            with open(file, "rb") as source:
                if output == "-":
                    sealing.open_sealed(source, sys.stdout.buffer, passphrase)
                    sys.stdout.buffer.flush()
                    return
                self.open_into(source, Path(output), passphrase)
        except (OSError, sealing.SealError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Opened: {output}.")

    def open_into(self, source, output: Path, passphrase: bytes) -> None:
        try:
            descriptor = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise CommandError(f"{output} exists: name a new file.") from None
        try:
            with open(descriptor, "wb") as target:
                sealing.open_sealed(source, target, passphrase)
        except BaseException:
            # Never a half-opened copy left that looks whole.
            output.unlink(missing_ok=True)
            raise
