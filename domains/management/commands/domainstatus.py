from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from domains.management.commands._base import get_domain
from domains.services.domains import domain_troubleshoot


def _iso(value):
    return value.isoformat() if value else None


class Command(BaseCommand):
    help = "Print a domain's state, last check and certificate as JSON."

    def add_arguments(self, parser):
        parser.add_argument("hostname")

    def handle(self, *args, hostname, **options):
        domain = get_domain(hostname)
        certificate = domain.certificate
        status = {
            "hostname": domain.hostname,
            "hostname_unicode": domain.hostname_unicode,
            "project": domain.project.slug,
            "apex": domain.is_apex,
            "state": domain.state,
            "check": {
                "code": domain.check_code or None,
                "message": domain.check_message or None,
                "expected": domain.check_expected or None,
                "found": domain.check_found or None,
                "checked_at": _iso(domain.checked_at),
                "next_check_at": _iso(domain.next_check_at),
            },
            "verified_at": _iso(domain.verified_at),
            "needs_troubleshooting": domain.needs_troubleshooting,
            "certificate": {
                "state": domain.cert_state,
                "problem": domain.cert_message or None,
                "serial": certificate.serial if certificate else None,
                "not_after": _iso(certificate.not_after) if certificate else None,
                "san": certificate.san if certificate else None,
            },
            "dns_records": domain.dns_records(),
        }
        if domain.needs_troubleshooting:
            # The spec's steps after 30 minutes without a certificate, run now.
            status["troubleshooting"] = domain_troubleshoot(domain=domain) | {
                "next_step": "If it verifies and CAA does not block, choose Re-verify."
            }
        self.stdout.write(json.dumps(status, indent=2, ensure_ascii=False))
