from __future__ import annotations

from domains.management.commands._base import add_claim_arguments, get_domain
from domains.services.custom_domains import domain_remove
from petstore.management.staff import StaffCommand


class Command(StaffCommand):
    help = "Remove a custom domain: it stops serving at once."

    def add_arguments(self, parser):
        add_claim_arguments(parser)

    def handle(self, *args, hostname, project, **options):
        domain = get_domain(hostname, project)
        shown, slug = domain.hostname_unicode, domain.project.slug
        domain_remove(domain=domain, actor=None)
        self.stdout.write(f"Removed {shown} from {slug}; it no longer serves traffic.")
