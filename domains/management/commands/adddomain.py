from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from domains.management.commands._base import refusal
from domains.models import Project
from domains.selectors import is_contested
from domains.services.custom_domains import domain_add
from petstore.management.staff import StaffCommand


class Command(StaffCommand):
    help = "Attach a custom domain to a project and print the DNS record to create."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("hostname")

    def handle(self, *args, slug, hostname, **options):
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise CommandError(f"No project has the slug {slug}.")
        try:
            # Staff: neither the hourly Add limit nor the re-add cooldown applies.
            domain = domain_add(project=project, hostname=hostname, actor=None, limited=False)
        except ValidationError as exc:
            raise refusal(exc) from None
        self.stdout.write(f"Added {domain.hostname_unicode} to {project.slug}. Create:")
        records = domain.dns_records(contested=is_contested(domain))
        for record in records:
            self.stdout.write(
                f"  {record['type']} {record['name']} -> {record['value']} TTL {record['ttl']}"
            )
        for note in dict.fromkeys(record["note"] for record in records):
            self.stdout.write(f"  ({note})")
