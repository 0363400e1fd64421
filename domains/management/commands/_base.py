"""Shared bits of the staff commands: refusals exit non-zero with the service's message."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from domains.dns.hostnames import normalize_hostname
from domains.models import Domain


def refusal(exc: ValidationError) -> CommandError:
    return CommandError(" ".join(exc.messages))


def get_domain(hostname: str) -> Domain:
    try:
        ascii_name = normalize_hostname(hostname)
    except ValidationError as exc:
        raise refusal(exc) from None
    domain = Domain.objects.select_related("project").filter(hostname=ascii_name).first()
    if domain is None:
        raise CommandError(f"No project has the domain {hostname}.")
    return domain
