from __future__ import annotations

import contextlib
import logging

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from domains.devtools.devdns import DNSServer
from domains.devtools.sockets import PortInUseError

SAMPLE_ZONES = {
    # The platform's own names: the CNAME target resolves to this machine.
    "petstore.localhost": """$ORIGIN petstore.localhost.
$TTL 60
@        SOA ns1 hostmaster 1 7200 900 1209600 60
@        NS  ns1
ns1      A   127.0.0.1
domains  A   127.0.0.1
""",
    # A customer's zone to play with: www verifies, shop points elsewhere, apex flattens.
    "example.test": """$ORIGIN example.test.
$TTL 60
@        SOA ns1 hostmaster 1 7200 900 1209600 60
@        NS  ns1
ns1      A   127.0.0.1
@        A   127.0.0.1
www      CNAME domains.petstore.localhost.
shop     CNAME somewhere-else.example.net.
blog     A   203.0.113.7
""",
}


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
        from pathlib import Path

        logging.getLogger("domains.devtools.devdns").setLevel(logging.INFO)
        directory = Path(zones)
        directory.mkdir(parents=True, exist_ok=True)
        if not any(directory.glob("*.zone")):
            for origin, text in SAMPLE_ZONES.items():
                (directory / f"{origin}.zone").write_text(text)
            self.stdout.write(f"Wrote sample zones to {directory}")
        try:
            server = DNSServer(host, port, zone_dir=directory)
        except PortInUseError as exc:
            raise CommandError(f"devdns: {exc.strerror}; choose another with --port") from exc
        server.reload_zones()
        self.stdout.write(f"devdns: serving {directory}/*.zone on {server.address} (UDP+TCP)")
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()
