"""Shared bits of the staff commands: refusals exit non-zero with the service's message,
and a host name several projects claim needs --project to pick one claim."""

from __future__ import annotations

from argparse import ArgumentParser

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from domains.choices import Role
from domains.dns.hostnames import normalize_hostname
from domains.models import Domain, Project


def refusal(exc: ValidationError) -> CommandError:
    return CommandError(" ".join(exc.messages))


def add_claim_arguments(parser: ArgumentParser) -> None:
    parser.add_argument("hostname")
    parser.add_argument(
        "--project", metavar="SLUG", help="the project whose claim to act on, when several claim it"
    )


def get_claims(hostname: str, project: str | None = None) -> list[Domain]:
    """Every claim on the name (or the one of `project`); refuses when there is none."""
    try:
        # A wildcard domain is named as it was added.
        ascii_name = normalize_hostname(hostname, wildcard=True)
    except ValidationError as exc:
        raise refusal(exc) from None
    claims = Domain.objects.select_related("project").filter(hostname=ascii_name)
    if project is not None:
        claims = claims.filter(project__slug=project)
    found = list(claims.order_by("project__slug"))
    if not found and project is not None:
        raise CommandError(f"The project {project} has no claim on {hostname}.")
    if not found:
        raise CommandError(f"No project has the domain {hostname}.")
    return found


def get_domain(hostname: str, project: str | None = None) -> Domain:
    """The one claim to act on: refuses, naming the projects, when several claim the name
    and --project does not pick one."""
    claims = get_claims(hostname, project)
    if len(claims) > 1:
        slugs = ", ".join(claim.project.slug for claim in claims)
        raise CommandError(
            f"{hostname} is claimed by several projects ({slugs}); pick one with --project SLUG."
        )
    return claims[0]


def get_project(slug: str) -> Project:
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise CommandError(f"No project {slug!r}; `manage.py createproject` makes one.")
    return project


def get_role(role: str) -> str:
    if role not in Role.values:
        raise CommandError(f"Unknown role {role!r}; choose one of {', '.join(Role.values)}.")
    return role
