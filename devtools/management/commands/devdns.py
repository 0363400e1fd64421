from __future__ import annotations

import contextlib
import logging
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from devtools.devdns import DNSServer
from devtools.dnsupdates import Updates
from devtools.nameservers import NameServers
from devtools.sockets import PortInUseError
from devtools.starterzones import write_starter_zones


class Command(BaseCommand):
    help = (
        "Serve the zone files in DOMAINS_DEV_DNS_ZONES (<zone>.zone each, re-read on change) "
        "on 127.0.0.1:DOMAINS_DEV_DNS_PORT over UDP and TCP. With --also ADDRESS=DIR, also "
        "serve DIR's zone files on ADDRESS (another name server of a zone, say 127.0.0.2), "
        "and with --silent ADDRESS listen there and never answer (a lame one), all on the "
        "same port. With a DNS-01 TSIG key in the settings (make run writes one), the server "
        "on --host takes the TXT records of DOMAINS_DNS01_ZONE in RFC 2136 updates signed "
        "with it. For development only."
    )

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=settings.DOMAINS_DEV_DNS_PORT)
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--zones", default=str(settings.DOMAINS_DEV_DNS_ZONES))
        parser.add_argument(
            "--also", action="append", default=[], metavar="ADDRESS=DIR",
            help="Another address on the same port, serving the zone files in DIR.",
        )  # fmt: skip
        parser.add_argument(
            "--silent", action="append", default=[], metavar="ADDRESS",
            help="An address on the same port that reads every query and answers none.",
        )  # fmt: skip

    def handle(self, *args, port, host, zones, also, silent, **options):
        logging.getLogger("devtools.devdns").setLevel(logging.INFO)
        directory = Path(zones)
        for path in write_starter_zones(directory):
            self.stdout.write(f"Wrote the starter zone {path}")
        others = {}
        for entry in also:
            address, sep, other = entry.partition("=")
            if not sep or not address or not other:
                raise CommandError(f"devdns: --also {entry!r}: write ADDRESS=DIR")
            if not Path(other).is_dir():
                raise CommandError(f"devdns: --also {entry!r}: {other} is not a directory")
            others[address] = Path(other)
        try:
            servers = NameServers({host: directory, **others}, silent=silent, port=port)
        except PortInUseError as exc:
            raise CommandError(f"devdns: {exc.strerror}; choose another with --port") from exc
        except OSError as exc:  # an address that is not this machine's
            raise CommandError(f"devdns: {exc.strerror}; use loopback addresses") from exc
        self._take_updates(servers[host])
        servers.start()
        for address, server in servers.servers.items():
            self.stdout.write(
                f"devdns: {self._serving(server)} on {address}:{servers.port} (UDP+TCP)"
            )
            if server.updates is not None:
                self.stdout.write(
                    f"devdns: taking {settings.DOMAINS_DNS01_ZONE}'s TXT records (DNS-01) on "
                    f"{address} in RFC 2136 updates signed with the key "
                    f"{settings.DOMAINS_DNS01_TSIG_KEY_NAME}"
                )
        with contextlib.suppress(KeyboardInterrupt):
            try:
                while True:
                    time.sleep(3600)
            finally:
                servers.stop()

    def _take_updates(self, server: DNSServer) -> None:
        """The platform's DNS-01 updates, signed with its key (petstore/settings/dns01.py)."""
        key_name, secret = settings.DOMAINS_DNS01_TSIG_KEY_NAME, settings.DOMAINS_DNS01_TSIG_SECRET
        if not (key_name and secret and settings.DOMAINS_DNS01_ZONE):
            return
        server.updates = Updates(
            server.records,
            zone=settings.DOMAINS_DNS01_ZONE,
            key_name=key_name,
            algorithm=settings.DOMAINS_DNS01_TSIG_ALGORITHM,
            secret=secret,
        )

    @staticmethod
    def _serving(server: DNSServer) -> str:
        if server.records.silent:
            return "answering nothing"
        return f"serving {server.zone_dir}/*.zone"
