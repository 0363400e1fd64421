"""Redirect entries: `from` one domain of a project `to` another, with an HTTP status."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from psycopg import errors

from domains.choices import Action, RedirectStatus, State
from domains.models import Domain, Project, Redirect
from domains.services.events import record_event
from domains.services.projects import project_set_primary
from petstore.sentences import Sentence, Value, label


@transaction.atomic
def redirect_save(
    *,
    project: Project,
    from_domain: Domain,
    to_domain: Domain,
    status: int = RedirectStatus.MOVED_PERMANENTLY,
    redirect: Redirect | None = None,
    actor: User | None,
) -> Redirect:
    validate_redirect(project, from_domain, to_domain, int(status), redirect)
    if redirect is None:
        redirect = Redirect(project=project)
    redirect.from_domain, redirect.to_domain, redirect.status = from_domain, to_domain, int(status)
    try:
        # validate_redirect read `from` as free; a concurrent save may have taken it since,
        # and then the one-to-one constraint decides: the same refusal, not an error.
        with transaction.atomic():
            redirect.save()
    except IntegrityError as exc:
        if not isinstance(exc.__cause__, errors.UniqueViolation):
            raise
        raise _already_redirects(from_domain) from exc
    record_event(
        project=project,
        domain=from_domain,
        action=Action.REDIRECT_SAVED,
        message=f"{from_domain.hostname} -> {to_domain.hostname} ({redirect.status})",
        actor=actor,
    )
    return redirect


def validate_redirect(
    project: Project,
    from_domain: Domain,
    to_domain: Domain,
    status: int,
    redirect: Redirect | None,
) -> None:
    for end in (from_domain, to_domain):
        if end.project_id != project.pk:
            raise ValidationError(
                _("%(hostname)s does not belong to this project."),
                code="not_owned",
                params={"hostname": end.hostname_unicode},
            )
    if status not in RedirectStatus.values:
        raise ValidationError(
            _("Redirect status must be one of %(statuses)s."),
            code="invalid_status",
            params={"statuses": ", ".join(map(str, RedirectStatus.values))},
        )
    if from_domain.pk == to_domain.pk:
        raise ValidationError(_("A domain cannot redirect to itself."), code="redirect_loop")
    if not to_domain.is_live:
        raise ValidationError(
            _(
                "%(hostname)s is not live yet: a redirect may only point at a domain of this "
                "project that verified."
            ),
            code="target_not_live",
            params={"hostname": to_domain.hostname_unicode},
        )
    if project.primary_domain_id == from_domain.pk:
        raise ValidationError(
            _("%(hostname)s is the primary domain; it cannot redirect away."),
            code="primary_redirects",
            params={"hostname": from_domain.hostname_unicode},
        )
    others = Redirect.objects.filter(project=project)
    if redirect is not None:
        others = others.exclude(pk=redirect.pk)
    if others.filter(from_domain=from_domain).exists():
        raise _already_redirects(from_domain)
    hops = dict(others.values_list("from_domain_id", "to_domain_id"))
    current, visited = to_domain.pk, set()
    while current in hops and current not in visited:
        visited.add(current)
        current = hops[current]
        if current == from_domain.pk:
            raise ValidationError(
                _("This redirect would make a loop back to %(hostname)s."),
                code="redirect_loop",
                params={"hostname": from_domain.hostname_unicode},
            )


def _already_redirects(from_domain: Domain) -> ValidationError:
    return ValidationError(
        _("%(hostname)s already has a redirect."),
        code="duplicate_from",
        params={"hostname": from_domain.hostname_unicode},
    )


@transaction.atomic
def redirect_delete(*, redirect: Redirect, actor: User | None) -> None:
    project, from_domain = redirect.project, redirect.from_domain
    message = f"{from_domain.hostname} -> {redirect.to_domain.hostname}"
    redirect.delete()
    record_event(
        project=project,
        domain=from_domain,
        action=Action.REDIRECT_DELETED,
        message=message,
        actor=actor,
    )


def redirects_follow_target(*, target: Domain) -> None:
    """`target` just stopped being served (lost, stopped serving) or is served again: say
    so on each redirect to it. Only the service that moves the target's state calls this,
    once per move; the resolver reads the target's state on every request and never sends
    a visitor to a name that is not served here (it may be another project's by now)."""
    redirects = Redirect.objects.filter(to_domain=target).select_related("from_domain", "project")
    for redirect in redirects:
        source = redirect.from_domain
        values: dict[str, Value] = {"source": source.hostname, "target": target.hostname}
        if target.is_live:
            action = Action.REDIRECT_RESUMED
            said = Sentence(
                gettext_noop(
                    "%(source)s -> %(target)s: %(target)s is served again, so visitors to "
                    "%(source)s are sent there again."
                ),
                values,
            )
        else:
            action = Action.REDIRECT_PAUSED
            said = Sentence(
                gettext_noop(
                    "%(source)s -> %(target)s: %(target)s is not served here (%(state)s), so "
                    "visitors to %(source)s get its own page until it is live again."
                ),
                values | {"state": label(State(target.state).label)},
            )
        record_event(project=redirect.project, domain=source, action=action, said=said)


@transaction.atomic
def redirect_instead_of_removal(
    *, project: Project, domain: Domain, to_domain: Domain, actor: User | None
) -> Redirect:
    """Remove's alternative: `domain` stays and sends its visitors on to `to_domain` (301).
    A redirect from `to_domain` back to `domain` gives way (the two would loop), as Remove
    would have deleted it; where `domain` was the primary, `to_domain` becomes the primary
    (the primary cannot redirect away)."""
    back = Redirect.objects.filter(project=project, from_domain=to_domain, to_domain=domain)
    for entry in back.select_related("from_domain", "to_domain"):
        redirect_delete(redirect=entry, actor=actor)
    if project.primary_domain_id == domain.pk:
        project_set_primary(project=project, domain=to_domain, actor=actor)
    return redirect_save(project=project, from_domain=domain, to_domain=to_domain, actor=actor)
