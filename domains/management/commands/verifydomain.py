from __future__ import annotations

from django.core.management.base import CommandError

from domains import tasks
from domains.choices import CheckCode
from domains.management.commands._base import add_claim_arguments, get_domain
from domains.services.custom_domains import domain_request_check
from domains.services.verification import domain_check
from petstore.management.staff import StaffCommand


class Command(StaffCommand):
    help = (
        "Verify now, in the foreground, and print the result; like the dashboard's Verify it "
        "restarts the verification window, and a success queues the certificate."
    )

    def add_arguments(self, parser):
        add_claim_arguments(parser)

    def handle(self, *args, hostname, project, **options):
        domain = get_domain(hostname, project)
        # Verify resets the backoff; the check itself runs here instead of on a worker.
        domain_request_check(domain=domain, actor=None, cooldown=False)
        recorded = domain_check(domain_id=domain.pk)
        tasks.enqueue(recorded.next_steps)
        checked = recorded.domain
        if checked is None:
            raise CommandError(f"{hostname} was removed while it was being checked.")
        self.stdout.write(
            f"{checked.hostname_unicode}: {checked.check_code} ({checked.get_state_display()})\n"
            f"  {checked.check_message}\n"
            f"  expected: {checked.check_expected or '-'}\n"
            f"  found:    {checked.check_found or '-'}"
        )
        if checked.check_code != CheckCode.OK:
            raise CommandError(
                f"{checked.hostname_unicode} does not verify: {checked.check_message}"
            )
