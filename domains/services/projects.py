"""Projects, their deploys and their primary domain."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from domains.choices import Action, Plan
from domains.models import Deploy, Domain, Project, Redirect
from domains.services.events import record_event


def project_create(*, slug: str, owner: User, plan: str = Plan.FREE, name: str = "") -> Project:
    if plan not in Plan.values:
        raise ValidationError(
            f"Unknown plan {plan!r}; choose one of {', '.join(Plan.values)}.", code="invalid_plan"
        )
    if Project.objects.filter(slug=slug).exists():
        raise ValidationError(f"A project with the slug {slug!r} exists already.", code="taken")
    project = Project(slug=slug, owner=owner, plan=plan, name=name or slug)
    project.full_clean()
    project.save()
    return project


def deploy_record(*, project: Project, html: str, succeeded: bool = True) -> Deploy:
    return Deploy.objects.create(project=project, html=html, succeeded=succeeded)


@transaction.atomic
def project_set_primary(*, project: Project, domain: Domain | None, actor: User | None) -> None:
    validate_primary(project, domain)
    Project.objects.filter(pk=project.pk).update(primary_domain=domain)
    project.primary_domain = domain
    record_event(
        project=project,
        domain=domain,
        action=Action.PRIMARY_SET,
        message=f"Primary domain: {domain.hostname if domain else 'none'}",
        actor=actor,
    )


def validate_primary(project: Project, domain: Domain | None) -> None:
    """The rules of a primary domain (the dashboard, the admin's form and the service):
    one of the project's own domains, and not one that redirects away."""
    if domain is None:
        return
    if domain.project_id != project.pk:
        raise ValidationError(
            f"{domain.hostname_unicode} does not belong to this project.", code="not_owned"
        )
    if Redirect.objects.filter(from_domain=domain).exists():
        raise ValidationError(
            f"{domain.hostname_unicode} redirects elsewhere; delete that redirect before "
            "making it the primary domain.",
            code="primary_redirects",
        )
