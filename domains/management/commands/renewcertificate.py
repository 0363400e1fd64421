from __future__ import annotations

from django.core.management.base import CommandError
from django.utils import timezone

from domains import pki
from domains.choices import State
from domains.management.commands._base import add_claim_arguments, get_domain
from domains.services.certificates import TemporaryDNSError, certificate_renew
from petstore.management.staff import StaffCommand


class Command(StaffCommand):
    help = (
        "Renew an active domain's certificate now, in the foreground, whatever its renewal "
        "date (e.g. after a key may have leaked); the edge serves the new one at once."
    )

    def add_arguments(self, parser):
        add_claim_arguments(parser)

    def handle(self, *args, hostname, project, **options):
        domain = get_domain(hostname, project)
        if domain.state != State.ACTIVE:
            raise CommandError(
                f"{domain.hostname_unicode} has no certificate to renew "
                f"({domain.get_state_display()})."
            )
        try:
            renewed = certificate_renew(domain_id=domain.pk, issued_before=timezone.now())
        except TemporaryDNSError as exc:
            raise CommandError(f"Not renewed: {exc}") from None
        except pki.Pending as exc:
            raise CommandError(f"Not renewed yet: {exc} Run this again shortly.") from None
        if renewed is None:
            domain.refresh_from_db()
            reason = domain.cert_message or "Not renewed: it is no longer active."
            raise CommandError(f"{domain.hostname_unicode}: {reason}")
        self.stdout.write(
            f"Renewed {domain.hostname_unicode}: serial {renewed.serial}, issuer {renewed.issuer}, "
            f"valid until {renewed.not_after:%Y-%m-%d}."
        )
