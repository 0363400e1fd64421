"""The access table in prose: docs/decisions/access.md's matrix, written from
domains/access.py by `manage.py accessreference` (and compared with it by --check and by
tests/domains/test_accessreference.py), so the page cannot drift from what is enforced."""

from __future__ import annotations

import re

from domains import access
from domains.access import Permission
from domains.choices import Role

BEGIN = "<!-- access matrix: written by `manage.py accessreference` from domains/access.py -->"
END = "<!-- end of the access matrix -->"
ROLES = [Role.VIEWER, Role.DEVELOPER, Role.ADMIN, Role.OWNER]


def matrix() -> str:
    """The role × permission table, with the key scope each permission needs."""
    header = "| Permission | " + " | ".join(f"`{role}`" for role in ROLES) + " | API key scope |"
    lines = [header, "|---" * (len(ROLES) + 2) + "|"]
    for permission in Permission:
        marks = " | ".join("✓" if access.allows(role, permission) else "" for role in ROLES)
        scope = access.scope_for(permission)
        shown = f"`{scope}`" if scope else "none: signed-in people only"
        lines.append(f"| {permission.label} (`{permission.value}`) | {marks} | {shown} |")
    lines += [
        "",
        "| A member of | invites, changes and removes members of the roles |",
        "|---|---|",
    ]
    for role in ROLES:
        managed = [f"`{other}`" for other in ROLES if access.manages(role, other)]
        lines.append(f"| `{role}` | {', '.join(managed) or 'none'} |")
    return "\n".join([BEGIN, "", *lines, "", END])


def rewritten(page: str) -> str:
    """`page` with its matrix block (between BEGIN and END) replaced by today's."""
    block = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if not block.search(page):
        raise ValueError(f"No access matrix block: add the lines {BEGIN!r} and {END!r}.")
    return block.sub(lambda _: matrix(), page)
