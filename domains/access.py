"""Who may do what on a project: each role's permissions, and the key scope each needs.

The one table of access, written once. The dashboard, the domains API, the admin and the
commands all ask `allows()` (and the API also `scope_for()`); docs/decisions/access.md prints
the table from here (`manage.py accessreference`), and tests/security/test_access_matrix.py
tries every operation of every URL against it.

Roles are cumulative, the smallest first: a developer may do what a viewer may and more.
A permission whose scope is None is never done with an API key, only by a person signed in.
Imports only domains.choices and the key scopes.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import models

from domains.choices import Role
from petstore.apikeys.scopes import PETS_SCOPES, Scope


class Permission(models.TextChoices):
    DOMAINS_READ = "domains.read", "See domains, their checks, diagnosis and Activity"
    REDIRECTS_READ = "redirects.read", "See redirects"
    WEBHOOKS_READ = "webhooks.read", "See webhook endpoints (never their secrets)"
    DELIVERIES_READ = "deliveries.read", "See webhook deliveries"
    MEMBERS_READ = "members.read", "See members and invitations"
    AUDIT_READ = "audit.read", "See the audit log"
    DOMAINS_ADD = "domains.add", "Add domain"
    DOMAINS_VERIFY = "domains.verify", "Verify and Re-verify"
    REDIRECTS_WRITE = "redirects.write", "Add, change and delete redirects"
    DELIVERIES_REDELIVER = "deliveries.redeliver", "Redeliver"
    DOMAINS_REMOVE = "domains.remove", "Remove a domain"
    PRIMARY_SET = "primary.set", "Set the primary domain"
    WEBHOOKS_WRITE = "webhooks.write", "Add and delete webhook endpoints, see and rotate secrets"
    NOTIFICATIONS_WRITE = "notifications.write", "Change the project's notification settings"
    MEMBERS_WRITE = "members.write", "Invite, change and remove members below owner"
    OWNERS_WRITE = "owners.write", "Add an owner, transfer ownership, change or remove an owner"
    PLAN_WRITE = "plan.write", "Change the plan"
    PROJECT_DELETE = "project.delete", "Delete the project"


P = Permission

_VIEWER = frozenset(
    {
        P.DOMAINS_READ,
        P.REDIRECTS_READ,
        P.WEBHOOKS_READ,
        P.DELIVERIES_READ,
        P.MEMBERS_READ,
        P.AUDIT_READ,
    }
)
_DEVELOPER = _VIEWER | {P.DOMAINS_ADD, P.DOMAINS_VERIFY, P.REDIRECTS_WRITE, P.DELIVERIES_REDELIVER}
_ADMIN = _DEVELOPER | {
    P.DOMAINS_REMOVE,
    P.PRIMARY_SET,
    P.WEBHOOKS_WRITE,
    P.NOTIFICATIONS_WRITE,
    P.MEMBERS_WRITE,
}
_OWNER = _ADMIN | {P.OWNERS_WRITE, P.PLAN_WRITE, P.PROJECT_DELETE}

# What each role may do on its project.
ROLE_PERMISSIONS: dict[str, frozenset[str]] = {
    Role.VIEWER: _VIEWER,
    Role.DEVELOPER: _DEVELOPER,
    Role.ADMIN: _ADMIN,
    Role.OWNER: _OWNER,
}

# The scope an API key needs for each permission; None: a signed-in person only.
PERMISSION_SCOPE: dict[str, str | None] = {
    P.DOMAINS_READ: Scope.DOMAINS_READ,
    P.REDIRECTS_READ: Scope.DOMAINS_READ,
    P.WEBHOOKS_READ: Scope.WEBHOOKS_READ,
    P.DELIVERIES_READ: Scope.WEBHOOKS_READ,
    P.MEMBERS_READ: Scope.MEMBERS_READ,
    P.AUDIT_READ: Scope.AUDIT_READ,
    P.DOMAINS_ADD: Scope.DOMAINS_WRITE,
    P.DOMAINS_VERIFY: Scope.DOMAINS_WRITE,
    P.REDIRECTS_WRITE: Scope.DOMAINS_WRITE,
    P.DELIVERIES_REDELIVER: Scope.WEBHOOKS_WRITE,
    P.DOMAINS_REMOVE: Scope.DOMAINS_WRITE,
    P.PRIMARY_SET: Scope.DOMAINS_WRITE,
    P.WEBHOOKS_WRITE: Scope.WEBHOOKS_WRITE,
    P.NOTIFICATIONS_WRITE: None,
    P.MEMBERS_WRITE: Scope.MEMBERS_WRITE,
    P.OWNERS_WRITE: Scope.MEMBERS_WRITE,
    P.PLAN_WRITE: None,
    P.PROJECT_DELETE: None,
}

# The roles a member of each role may give, change and take away: an admin manages every
# member below owner; only an owner touches owners.
ROLES_MANAGED: dict[str, frozenset[str]] = {
    Role.VIEWER: frozenset(),
    Role.DEVELOPER: frozenset(),
    Role.ADMIN: frozenset({Role.ADMIN, Role.DEVELOPER, Role.VIEWER}),
    Role.OWNER: frozenset(Role),
}


def allows(role: str | None, permission: str) -> bool:
    """Whether a member of `role` (None: not a member) may do `permission`."""
    return role is not None and permission in ROLE_PERMISSIONS[role]


def manages(role: str | None, other: str) -> bool:
    """Whether a member of `role` may invite to, change to or from, and remove `other`."""
    return role is not None and other in ROLES_MANAGED[role]


def roles_with(permission: str) -> frozenset[str]:
    """The roles that allow `permission`: a query's filter on a member's role."""
    return frozenset(role for role, allowed in ROLE_PERMISSIONS.items() if permission in allowed)


def scope_for(permission: str) -> str | None:
    return PERMISSION_SCOPE[permission]


def role_scopes(role: str) -> frozenset[str]:
    """The scopes that can do something for a member of `role`: a key's default."""
    return frozenset(
        scope for p in ROLE_PERMISSIONS[role] if (scope := PERMISSION_SCOPE[p]) is not None
    )


# The members mailed a project's events (each by their own choice of event types,
# Settings → Notifications): those whose role may act on them, owners and admins.
MAILED_ROLES = roles_with(Permission.NOTIFICATIONS_WRITE)


def key_scopes(roles: Iterable[str]) -> frozenset[str]:
    """The scopes a key may hold whose user has `roles`: its one role on the project a key is
    limited to, or every role the user holds for a key of all their projects; and the pets
    API's, which no project role decides."""
    return PETS_SCOPES.union(*(role_scopes(role) for role in roles))
