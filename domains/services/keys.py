"""API keys as the members of projects make them: the scopes a user may give a key, a key
limited to one project, the key's revocation by its user, and the notice that a key ends.

A key's scopes never exceed what its user may do: for a key limited to a project, the scopes
of their role there; for a key of all their projects, those of every role they hold; and the
pets API's (domains/access.py `key_scopes`). This is checked when the key is made; at each
request the user's role on the project decides again (domains/api/shortcuts.py), so a member
demoted or removed later loses what the key could do at once.

The dashboard (Settings → API keys), `manage.py createapikey` and the admin call these.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from domains import access
from domains.choices import AuditAction, EventType
from domains.models import Membership, Project, ProjectKey
from domains.policy import KEY_EXPIRY_NOTICE, KEY_EXPIRY_NOTICES_PER_RUN
from domains.services.audit import audit_record
from domains.services.events import record_owner_event
from petstore.apikeys.models import DEFAULT_KEY_DAYS, ApiKey
from petstore.apikeys.scopes import ALL_SCOPES
from petstore.apikeys.services import IssuedKey, api_key_issue, api_key_revoke
from petstore.sentences import Sentence


def key_scopes_offered(*, user: User, project: Project | None = None) -> frozenset[str]:
    """The scopes `user` may give a key limited to `project` (None: a key of all of their
    projects). `project` must come with the user's `role` (Project.objects.for_member)."""
    if project is not None:
        return access.key_scopes([project.role])
    roles = Membership.objects.filter(user=user).values_list("role", flat=True).distinct()
    return access.key_scopes(roles)


def key_project(*, user: User, slug: str) -> Project:
    """The project `slug` of which `user` is a member, with their role; refused otherwise
    (the same refusal for a project that does not exist)."""
    project = Project.objects.for_member(user).filter(slug=slug).first()
    if project is None:
        raise ValidationError(
            _("%(username)s is no member of a project '%(project)s'; name one of theirs."),
            code="key_project",
            params={"username": user.get_username(), "project": slug},
        )
    return project


def key_scopes_clean(
    *, user: User, project: Project | None, scopes: Iterable[str] | None
) -> list[str]:
    """The scopes asked for, sorted, each once; None asks for every scope offered. An
    unknown scope, none at all, or one the user's role does not allow is refused."""
    offered = key_scopes_offered(user=user, project=project)
    chosen = sorted(offered if scopes is None else set(scopes))
    unknown = [scope for scope in chosen if scope not in ALL_SCOPES]
    if unknown:
        raise ValidationError(
            _("Unknown scope %(unknown)s; the scopes are %(scopes)s."),
            code="unknown_scope",
            params={"unknown": ", ".join(unknown), "scopes": ", ".join(sorted(ALL_SCOPES))},
        )
    if not chosen:
        raise ValidationError(_("Choose at least one scope."), code="key_scopes_empty")
    beyond = [scope for scope in chosen if scope not in offered]
    if beyond:
        where = (
            _(
                "%(username)s's role on %(project)s does not allow %(scopes)s; choose among "
                "%(offered)s."
            )
            if project is not None
            else _(
                "%(username)s's role on any of their projects does not allow %(scopes)s; "
                "choose among %(offered)s."
            )
        )
        raise ValidationError(
            where,
            code="key_scope_not_allowed",
            params={
                "username": user.get_username(),
                "project": project.slug if project is not None else "",
                "scopes": ", ".join(beyond),
                "offered": ", ".join(sorted(offered)),
            },
        )
    return chosen


@transaction.atomic
def key_create(
    *,
    user: User,
    name: str = "default",
    project: Project | None = None,
    scopes: Iterable[str] | None = None,
    days: int = DEFAULT_KEY_DAYS,
) -> IssuedKey:
    """A new key of `user`'s: limited to `project` (with the user's `role` on it) or for all
    their projects, with `scopes` (None: every scope offered), ending in `days`."""
    chosen = key_scopes_clean(user=user, project=project, scopes=scopes)
    issued = api_key_issue(user=user, name=name, scopes=chosen, days=days)
    if project is not None:
        ProjectKey.objects.create(api_key=issued.api_key, project=project)
    _audit(issued.api_key, AuditAction.KEY_CREATED, {
        "scopes": (None, sorted(chosen)),
        "expires_at": (None, issued.api_key.expires_at.isoformat()),
    })  # fmt: skip
    return issued


def key_revoke(*, user: User, api_key: ApiKey) -> bool:
    """`user` revokes one of their own keys; False if it was revoked already."""
    if api_key.user_id != user.pk:
        raise ValidationError(_("This key is not yours."), code="key_not_yours")
    with transaction.atomic():
        revoked = api_key_revoke(api_key=api_key)
        if revoked:
            _audit(api_key, AuditAction.KEY_REVOKED, {"revoked": (False, True)})
    return revoked


def _audit(api_key: ApiKey, action: str, changes: dict) -> None:
    """A key's change, in the audit log of each project it reaches (a key of all its user's
    projects is theirs in every one)."""
    for project in key_projects(api_key):
        audit_record(project, action, f"key:{api_key.display_prefix}", changes=changes)


# --- The notice that a key ends ------------------------------------------------------


def keys_expiring_tell(*, now: datetime | None = None) -> int:
    """Tell the projects of each key that ends within KEY_EXPIRY_NOTICE, once per key (the
    key.expiring event); the number of keys told. Safe to run twice at once: each key is
    claimed by a conditional UPDATE, in the transaction of its events."""
    now = now or timezone.now()
    ending = (
        ApiKey.objects.ending_untold(before=now + KEY_EXPIRY_NOTICE, now=now)
        .select_related("user")
        .order_by("expires_at", "pk")[:KEY_EXPIRY_NOTICES_PER_RUN]
    )
    return sum(_tell(api_key, now) for api_key in ending)


@transaction.atomic
def _tell(api_key: ApiKey, now: datetime) -> bool:
    claimed = ApiKey.objects.filter(pk=api_key.pk, expiry_told_at__isnull=True).update(
        expiry_told_at=now
    )
    if not claimed:
        return False  # told by another run
    for project in key_projects(api_key):
        record_owner_event(
            project=project,
            domain=None,
            # The subject of the event, where a domain's event names its host: one notice per
            # key (the mail's once-a-day rule is per subject).
            hostname=api_key.display_prefix,
            type=EventType.KEY_EXPIRING,
            said=Sentence(
                gettext_noop(
                    "The API key %(key)s (%(name)s) of %(username)s ends at %(when)s UTC."
                ),
                {
                    "key": api_key.display_prefix,
                    "name": api_key.name,
                    "username": api_key.user.get_username(),
                    "when": f"{api_key.expires_at:%Y-%m-%d %H:%M}",
                },
            ),
            key=api_key.display_prefix,
            key_name=api_key.name,
            username=api_key.user.get_username(),
            ends_at=api_key.expires_at,
            path=reverse("dashboard:api_keys"),
        )
    return True


def key_projects(api_key: ApiKey) -> list[Project]:
    """The projects a key reaches now: its one project, if its user is still a member there;
    otherwise every project its user is a member of."""
    mine = Project.objects.filter(memberships__user_id=api_key.user_id)
    bound = ProjectKey.objects.filter(api_key=api_key).values("project_id")
    if bound.exists():
        mine = mine.filter(pk__in=bound)
    return list(mine.order_by("pk"))
