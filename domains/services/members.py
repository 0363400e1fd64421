"""A project's people: role changes, removal, ownership, leaving, and the rules every
change of them follows (invitations: domains/services/invitations.py).

Every change is decided under a row lock on the project (SELECT ... FOR UPDATE), with the
actor's role and the member's read again under it: two owners demoting each other at the
same moment queue on the lock, and the second sees the first's change, so the project
keeps at least one owner (`last_owner`). Who may do what is domains/access.py's alone:
`members.write` for the roles below owner, `owners.write` when an owner is involved (made,
changed or removed), and an actor manages only the roles `access.manages` says. An actor
of None is staff (the commands, the admin), who may do anything the rules of the project
allow.

`Project.owner`, the compatibility column older processes read, is kept naming an owner
(the earliest) whenever the one it names stops being one.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from domains import access
from domains.access import Permission
from domains.choices import AuditAction, Role
from domains.models import Membership, Project
from domains.services.audit import audit_record

# --- the rules -------------------------------------------------------------------


def locked_project(project: Project) -> Project:
    """The project's row, locked until the transaction ends: every change of its people
    is decided under this lock."""
    return Project.objects.select_for_update().get(pk=project.pk)


def _role_of(project: Project, user: User | None) -> str | None:
    if user is None:
        return None
    return (
        Membership.objects.filter(project=project, user=user).values_list("role", flat=True).first()
    )


def _refuse_role(role: str) -> ValidationError:
    return ValidationError(
        _("Your role on this project may not give, change or take away the role %(role)s."),
        code="role_not_allowed",
        params={"role": role},
    )


def check_manages(project: Project, actor: User | None, *roles: str) -> None:
    """Refused unless `actor` (None: staff) may touch members of each of `roles`."""
    if actor is None:
        return
    mine = _role_of(project, actor)
    needed = Permission.OWNERS_WRITE if Role.OWNER in roles else Permission.MEMBERS_WRITE
    for role in roles:
        if not access.allows(mine, needed) or not access.manages(mine, role):
            raise _refuse_role(role)


def role_clean(role: str) -> str:
    if role not in Role.values:
        raise ValidationError(
            _("Unknown role '%(role)s'; choose one of %(roles)s."),
            code="invalid_role",
            params={"role": role, "roles": ", ".join(Role.values)},
        )
    return role


def _keep_an_owner(project: Project, leaving: Membership) -> None:
    """Refused when `leaving` is the project's last owner (the project row is locked)."""
    if leaving.role != Role.OWNER:
        return
    others = Membership.objects.filter(project=project, role=Role.OWNER).exclude(pk=leaving.pk)
    if not others.exists():
        raise ValidationError(
            _("A project always has an owner: make another member an owner first."),
            code="last_owner",
        )


def _compat_owner(project: Project) -> None:
    """Project.owner names an owner still (the earliest), for the processes that read it."""
    owners = Membership.objects.filter(project=project, role=Role.OWNER).order_by("created_at")
    current = Project.objects.filter(pk=project.pk).values_list("owner_id", flat=True).get()
    if not owners.filter(user_id=current).exists():
        first = owners.values_list("user_id", flat=True).first()
        Project.objects.filter(pk=project.pk).update(owner_id=first)
        project.owner_id = first


def _member(project: Project, membership_id: int) -> Membership:
    found = (
        Membership.objects.select_for_update(of=("self",))
        .select_related("user")
        .filter(project=project, pk=membership_id)
        .first()
    )
    if found is None:
        raise ValidationError(_("No such member of this project."), code="no_member")
    return found


# --- members ---------------------------------------------------------------------


def member_add(*, project: Project, user: User, role: str, actor: User | None) -> Membership:
    """`user` joins with `role` directly (staff's `addmember`): no invitation."""
    role = role_clean(role)
    with transaction.atomic():
        project = locked_project(project)
        check_manages(project, actor, role)
        if Membership.objects.filter(project=project, user=user).exists():
            raise ValidationError(
                _("%(username)s is already a member of %(project)s."),
                code="already_member",
                params={"username": user.get_username(), "project": project.slug},
            )
        member = Membership.objects.create(project=project, user=user, role=role)
        audit_record(
            project, AuditAction.MEMBER_ADDED, _target(member), changes={"role": (None, role)}
        )
        return member


def member_change_role(
    *, project: Project, membership_id: int, role: str, actor: User | None
) -> Membership:
    """The member's role becomes `role` (to `owner`: another owner). Refused: a role the
    actor may not touch (the member's or the new one), or the last owner's demotion."""
    role = role_clean(role)
    with transaction.atomic():
        project = locked_project(project)
        member = _member(project, membership_id)
        check_manages(project, actor, member.role, role)
        if member.role != role:
            if role != Role.OWNER:
                _keep_an_owner(project, member)
            before, member.role = member.role, role
            member.save(update_fields=["role"])
            _compat_owner(project)
            audit_record(
                project, AuditAction.MEMBER_ROLE_CHANGED, _target(member),
                changes={"role": (before, role)},
            )  # fmt: skip
    return member


def member_remove(*, project: Project, membership_id: int, actor: User | None) -> Membership:
    """The member is no member any more: their next request (a session, a key) finds
    nothing of the project. Refused for a role the actor may not touch, or the last owner."""
    with transaction.atomic():
        project = locked_project(project)
        member = _member(project, membership_id)
        check_manages(project, actor, member.role)
        _keep_an_owner(project, member)
        target = _target(member)
        member.delete()
        _compat_owner(project)
        audit_record(
            project, AuditAction.MEMBER_REMOVED, target, changes={"role": (member.role, None)}
        )
    return member


def member_leave(*, project: Project, user: User) -> None:
    """`user` leaves the project, whatever their role; the last owner may not."""
    with transaction.atomic():
        project = locked_project(project)
        member = Membership.objects.select_for_update().filter(project=project, user=user).first()
        if member is None:
            raise ValidationError(_("You are no member of this project."), code="no_member")
        _keep_an_owner(project, member)
        target = _target(member)
        member.delete()
        _compat_owner(project)
        audit_record(
            project, AuditAction.MEMBER_LEFT, target, changes={"role": (member.role, None)}
        )


def ownership_transfer(*, project: Project, membership_id: int, actor: User) -> Membership:
    """The member becomes an owner and `actor`, an owner, becomes an admin: one step, so
    the project is never without an owner. Project.owner names the new owner."""
    with transaction.atomic():
        project = locked_project(project)
        member = _member(project, membership_id)
        mine = Membership.objects.select_for_update().filter(project=project, user=actor).first()
        if mine is None or not access.allows(mine.role, Permission.OWNERS_WRITE):
            raise _refuse_role(Role.OWNER)
        if mine.pk == member.pk:
            raise ValidationError(_("You own this project already."), code="transfer_to_self")
        before, member.role = member.role, Role.OWNER
        member.save(update_fields=["role"])
        mine.role = Role.ADMIN
        mine.save(update_fields=["role"])
        Project.objects.filter(pk=project.pk).update(owner=member.user)
        project.owner = member.user
        audit_record(
            project, AuditAction.MEMBER_OWNERSHIP_TRANSFERRED, _target(member),
            changes={"role": (before, Role.OWNER), "from": (actor.get_username(), None)},
        )  # fmt: skip
    return member


def _target(member: Membership) -> str:
    """A member as the audit log names them (the row may be gone later)."""
    return f"member:{member.user.get_username()}"
