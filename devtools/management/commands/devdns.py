from __future__ import annotations

import contextlib
import logging
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from devtools.devdns import DNSServer
from devtools.sockets import PortInUseError
from devtools.starterzones import write_starter_zones


class Command(BaseCommand):
    help = (
        "Serve the zone files in DOMAINS_DEV_DNS_ZONES (<zone>.zone each, re-read on change) "
        "on 127.0.0.1:DOMAINS_DEV_DNS_PORT over UDP and TCP. For development only."
    )

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=settings.DOMAINS_DEV_DNS_PORT)
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--zones", default=str(settings.DOMAINS_DEV_DNS_ZONES))

    def handle(self, *args, port, host, zones, **options):
        logging.getLogger("devtools.devdns").setLevel(logging.INFO)
        directory = Path(zones)
        for path in write_starter_zones(directory):
            self.stdout.write(f"Wrote the starter zone {path}")
        try:
            server = DNSServer(host, port, zone_dir=directory)
        except PortInUseError as exc:
            raise CommandError(f"devdns: {exc.strerror}; choose another with --port") from exc
        server.reload_zones()
        self.stdout.write(f"devdns: serving {directory}/*.zone on {server.address} (UDP+TCP)")
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()
