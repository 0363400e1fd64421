"""Projects, their deploys and their primary domain."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from domains.choices import Action, AuditAction, Plan, Role
from domains.models import Deploy, Domain, Membership, Project, Redirect
from domains.services.audit import audit_record, changed_fields
from domains.services.events import record_event
from petstore.sentences import Sentence

# The project's own fields the audit log follows (the primary domain has its own action).
AUDITED_FIELDS = ("slug", "name", "owner_id", "plan")


@transaction.atomic
def project_create(*, slug: str, owner: User, plan: str = Plan.FREE, name: str = "") -> Project:
    """A new project, with `owner` its first member, of the role `owner`."""
    if plan not in Plan.values:
        raise ValidationError(
            _("Unknown plan '%(plan)s'; choose one of %(plans)s."),
            code="invalid_plan",
            params={"plan": plan, "plans": ", ".join(Plan.values)},
        )
    if Project.objects.filter(slug=slug).exists():
        raise ValidationError(
            _("A project with the slug '%(slug)s' exists already."),
            code="taken",
            params={"slug": slug},
        )
    project = Project(slug=slug, owner=owner, plan=plan, name=name or slug)
    project.full_clean()
    project.save()
    Membership.objects.create(project=project, user=owner, role=Role.OWNER)
    project_changes_record(project=project, before=None)
    return project


def project_changes_record(*, project: Project, before: Mapping[str, Any] | None) -> None:
    """The audit entries of a new project (`before` None) or of a change to its own fields
    (the admin's form saves them): the plan's, and the other fields'; `before` holds
    AUDITED_FIELDS as they were."""
    after = _audited(project)
    if before is None:
        created = changed_fields({}, after)
        audit_record(project, AuditAction.PROJECT_CREATED, project.slug, changes=created)
        return
    if plan := changed_fields(before, after, ["plan"]):
        audit_record(project, AuditAction.PLAN_CHANGED, project.slug, changes=plan)
    others = [name for name in AUDITED_FIELDS if name != "plan"]
    if changes := changed_fields(before, after, others):
        audit_record(project, AuditAction.PROJECT_CHANGED, project.slug, changes=changes)


@transaction.atomic
def project_delete(*, project: Project) -> None:
    """Delete the project and everything of it, but its audit entries: they name it by id
    and stay, to the retention's end."""
    audit_record(project, AuditAction.PROJECT_DELETED, project.slug)
    project.delete()


def projects_of_a_closing_account(*, user: User) -> None:
    """Before `user`'s account is deleted: each project they are the only owner of goes with
    it (nobody would be left to run it, nor to be told about it); a project with another
    owner stays theirs."""
    for project in Project.objects.filter(
        memberships__user=user, memberships__role=Role.OWNER
    ).distinct():
        others = project.memberships.filter(role=Role.OWNER).exclude(user=user)
        if not others.exists():
            project_delete(project=project)


def account_closing(sender: Any, instance: User, **kwargs: Any) -> None:
    """The receiver of a user's pre_delete (domains/apps.py)."""
    projects_of_a_closing_account(user=instance)


def project_audited_fields(project: Project) -> dict[str, Any]:
    """AUDITED_FIELDS as the database holds them now (before a form saves its own)."""
    return dict(Project.objects.filter(pk=project.pk).values(*AUDITED_FIELDS).get())


def _audited(project: Project) -> dict[str, Any]:
    return {name: getattr(project, name) for name in AUDITED_FIELDS}


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
        said=(
            Sentence(gettext_noop("Primary domain: %(hostname)s"), {"hostname": domain.hostname})
            if domain
            else Sentence(gettext_noop("Primary domain: none"))
        ),
        actor=actor,
    )


def validate_primary(project: Project, domain: Domain | None) -> None:
    """The rules of a primary domain (the dashboard, the admin's form and the service):
    one of the project's own domains, and not one that redirects away."""
    if domain is None:
        return
    if domain.project_id != project.pk:
        raise ValidationError(
            _("%(hostname)s does not belong to this project."),
            code="not_owned",
            params={"hostname": domain.hostname_unicode},
        )
    if Redirect.objects.filter(from_domain=domain).exists():
        raise ValidationError(
            _(
                "%(hostname)s redirects elsewhere; delete that redirect before making it the "
                "primary domain."
            ),
            code="primary_redirects",
            params={"hostname": domain.hostname_unicode},
        )
