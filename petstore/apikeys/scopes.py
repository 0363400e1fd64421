"""What an API key may be used for: its scopes, each a resource and read or write.

A key holds a set of these (ApiKey.scopes); an operation names the one it needs (the pets
API on its views, the domains API through domains/access.py), and a key without it is
answered 403 `insufficient_scope`. A scope never adds to what the key's user may do: on a
project, the user's role decides first (domains/access.py).
"""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class Scope(models.TextChoices):
    PETS_READ = "pets:read", _("Read pets and categories")
    PETS_WRITE = "pets:write", _("Add pets")
    DOMAINS_READ = "domains:read", _("Read domains, their checks and redirects")
    DOMAINS_WRITE = (
        "domains:write",
        _("Add, verify and remove domains; redirects; the primary domain"),
    )
    WEBHOOKS_READ = "webhooks:read", _("Read webhook endpoints and their deliveries")
    WEBHOOKS_WRITE = (
        "webhooks:write",
        _("Add and delete webhook endpoints, rotate secrets, redeliver"),
    )
    MEMBERS_READ = "members:read", _("Read members and invitations")
    MEMBERS_WRITE = "members:write", _("Invite, change and remove members")
    AUDIT_READ = "audit:read", _("Read the audit log")


ALL_SCOPES: frozenset[str] = frozenset(Scope.values)
# The scopes no project role decides: every user may read and add pets with a key.
PETS_SCOPES: frozenset[str] = frozenset({Scope.PETS_READ, Scope.PETS_WRITE})
