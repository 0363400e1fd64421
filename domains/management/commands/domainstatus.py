from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand

from domains.management.commands._base import add_claim_arguments, get_claims
from domains.models import Domain
from domains.selectors import domain_troubleshoot, is_contested


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def claim_status(domain: Domain) -> dict[str, Any]:
    """One claim as staff see it; what the dashboard shows, from stored results only."""
    certificate = domain.certificate
    status: dict[str, Any] = {
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
            "failing_since": _iso(domain.failing_since),
        },
        # What each of the zone's own name servers said (domains/dns/doctor.py), or null.
        "diagnosis": domain.check_diagnosis,
        "verified_at": _iso(domain.verified_at),
        "needs_troubleshooting": domain.needs_troubleshooting,
        "certificate": {
            "state": domain.cert_state,
            "problem": domain.cert_message or None,
            "serial": certificate.serial if certificate else None,
            "not_after": _iso(certificate.not_after) if certificate else None,
            # From when the renewal task renews it (the dashboard's "Renewal" line).
            "renew_after": _iso(certificate.renew_after) if certificate else None,
            "san": certificate.san if certificate else None,
            "issuer": certificate.issuer if certificate else None,
            # The ACME CA that issued it, its directory (null: the local CA).
            "ca": (certificate.ca_directory or None) if certificate else None,
        },
        "dns_records": domain.dns_records(contested=is_contested(domain)),
    }
    if domain.needs_troubleshooting:
        # The spec's steps after 30 minutes without a certificate, from the last checks.
        troubleshooting = domain_troubleshoot(domain=domain)
        status["troubleshooting"] = troubleshooting | {
            "checked_at": _iso(troubleshooting["checked_at"]),
            "next_step": (
                "If it verifies, CAA does not block and the CA did not refuse the order, "
                "choose Re-verify."
            ),
        }
    return status


class Command(BaseCommand):
    help = (
        "Print the claim on a host name (state, last check, certificate with its renewal "
        "date, DNS records) as JSON; when several projects claim it, each once under "
        "`claims`. --project SLUG prints that project's claim alone."
    )

    def add_arguments(self, parser):
        add_claim_arguments(parser)

    def handle(self, *args, hostname, project, **options):
        claims = [claim_status(claim) for claim in get_claims(hostname, project)]
        # Each claim once: a single claim is the output itself; several are listed.
        output = (
            claims[0] if len(claims) == 1 else {"hostname": claims[0]["hostname"], "claims": claims}
        )
        self.stdout.write(json.dumps(output, indent=2, ensure_ascii=False))
