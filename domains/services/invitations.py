"""Invitations to a project by email, and their acceptance.

One open invitation per address and project (inviting again revokes the one before); the
link carries a random secret of which only its SHA-256 is kept, and works once, for
INVITATION_VALID. Whoever opens the link may accept it with the account they are signed
in as, or a new one: the link is the proof that its holder read the mail, as for GitHub's
and Vercel's invitations by email; the inviter is told which account accepted, so a
forwarded link is seen. A new account made from the link takes the invitation's address as
its own. Invitations are counted per project per hour (INVITATIONS_PER_HOUR, the
platform's one limiter, petstore/ratelimits.py). Who may invite to which role, and the
project's row lock, are domains/services/members.py's.
"""

from __future__ import annotations

import logging
import smtplib
from dataclasses import dataclass

import redis
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from domains.channels.email import dashboard_url
from domains.choices import AuditAction, Role
from domains.models import Invitation, Membership, Project, link_digest, new_link_secret
from domains.policy import INVITATION_VALID, INVITATIONS_PER_HOUR
from domains.services.audit import audit_record
from domains.services.members import check_manages, locked_project, role_clean
from domains.services.notifications import address_checked
from petstore import ratelimits
from petstore.actors import user_actor
from petstore.languages import in_language_of
from petstore.taskfailures import describe

log = logging.getLogger(__name__)

# RFC 5321's limit, the account's email column.
EMAIL_MAX_LENGTH = 254
HOUR = 3600
# The Redis counter of a project's invitations this hour (petstore/ratelimits.py).
INVITE_COUNTER = "members:invite:{project_id}"


@dataclass(frozen=True)
class Invited:
    """An invitation made, and its link (shown once: only its digest is kept)."""

    invitation: Invitation
    link: str


def email_clean(email: str) -> str:
    """The address as invitations keep it (all lower case: one invitation per address)."""
    return address_checked(email.strip().lower(), missing=_("Type the address to invite."))


def _count_invitation(project: Project) -> None:
    """One more invitation of the project this hour, or a refusal past the limit. A Redis
    that cannot be reached does not stop invitations (logged): the limit protects others
    from mail, and a cache outage should not become an outage of the dashboard."""
    try:
        used, left = ratelimits.counted(
            ratelimits.HIT, INVITE_COUNTER.format(project_id=project.pk), HOUR
        )
    except redis.RedisError as exc:
        log.warning("invitation limit not applied, Redis unavailable: %s", exc)
        return
    if used > INVITATIONS_PER_HOUR:
        minutes = -(-ratelimits.seconds(left) // 60)
        raise ValidationError(
            _(
                "This project sent %(limit)d invitations this hour, the most allowed; try "
                "again in %(minutes)d minutes."
            ),
            code="invite_limit",
            params={"limit": INVITATIONS_PER_HOUR, "minutes": minutes},
        )


def invitation_link(secret: str) -> str:
    return dashboard_url(reverse("dashboard:invitation", args=[secret]))


def member_invite(*, project: Project, email: str, role: str, actor: User | None) -> Invited:
    """Invite `email` to the project with `role`, and mail the link; an open invitation
    of the same address is revoked (the new one replaces it). Refused: a role the actor
    may not give, a bad address, the hour's invitations used, or the mail server's
    refusal (the invitation is then taken back)."""
    address = email_clean(email)
    role = role_clean(role)
    secret = new_link_secret()
    now = timezone.now()
    with transaction.atomic():
        project = locked_project(project)
        check_manages(project, actor, role)
        _count_invitation(project)
        open_ones = Invitation.objects.filter(
            project=project, email=address, accepted_at__isnull=True, revoked_at__isnull=True
        )
        open_ones.update(revoked_at=now)
        invitation = Invitation.objects.create(
            project=project,
            email=address,
            role=role,
            invited_by=actor,
            token_hash=link_digest(secret),
            created_at=now,
            expires_at=now + INVITATION_VALID,
        )
        audit_record(
            project, AuditAction.MEMBER_INVITED, _target(invitation),
            changes={"role": (None, role)},
        )  # fmt: skip
    link = invitation_link(secret)
    # The invited address may have no account yet: the mail is in the inviter's language.
    with in_language_of(actor):
        inviter = actor.get_username() if actor is not None else _("The Petstore team")
        context = {
            "inviter": inviter,
            "project": project.name or project.slug,
            "role": Role(role).label,
            "link": link,
            "days": INVITATION_VALID.days,
        }
        text = render_to_string("notifications/invitation.txt", context)
        subject = _("Join %(project)s on Petstore") % {"project": context["project"]}
    try:
        send_mail(subject, text, None, [address])
    except (smtplib.SMTPException, OSError) as exc:
        with transaction.atomic():
            invitation.delete()
            audit_record(
                project, AuditAction.MEMBER_INVITATION_REVOKED, _target(invitation),
                changes={"role": (role, None), "mail": ("refused", None)},
            )  # fmt: skip
        raise ValidationError(
            _(
                "The invitation mail to %(address)s could not be sent (%(reason)s); try "
                "again in a few minutes."
            ),
            code="invitation_not_sent",
            params={"address": address, "reason": describe(exc)},
        ) from None
    return Invited(invitation=invitation, link=link)


def invitation_revoke(*, project: Project, invitation_id: int, actor: User | None) -> Invitation:
    with transaction.atomic():
        project = locked_project(project)
        invitation = (
            Invitation.objects.filter(
                project=project, pk=invitation_id, accepted_at__isnull=True, revoked_at__isnull=True
            )
            .select_for_update()
            .first()
        )
        if invitation is None:
            raise ValidationError(
                _("No such open invitation of this project."), code="no_invitation"
            )
        check_manages(project, actor, invitation.role)
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
        audit_record(
            project, AuditAction.MEMBER_INVITATION_REVOKED, _target(invitation),
            changes={"role": (invitation.role, None)},
        )  # fmt: skip
    return invitation


def _target(invitation: Invitation) -> str:
    return f"invitation:{invitation.email}"


def _open_invitation(token: str, *, lock: bool = False) -> Invitation:
    """The invitation `token` is the link of, if it can still be accepted."""
    found = Invitation.objects.select_related("project", "invited_by")
    if lock:
        found = found.select_for_update(of=("self",))
    invitation = found.filter(token_hash=link_digest(token)).first()
    if invitation is None:
        raise ValidationError(
            _(
                "This is not an invitation link of ours (part of it may be missing): open "
                "the link from the mail as it is."
            ),
            code="invitation_invalid",
        )
    if invitation.accepted_at is not None or invitation.revoked_at is not None:
        raise ValidationError(
            _("This invitation was used or withdrawn: ask for a new one."),
            code="invitation_used",
        )
    if invitation.expires_at <= timezone.now():
        raise ValidationError(
            _("This invitation is more than %(days)d days old: ask for a new one."),
            code="invitation_expired",
            params={"days": INVITATION_VALID.days},
        )
    return invitation


def invitation_read(*, token: str) -> Invitation:
    """The open invitation a link names, for its page, or why it cannot be accepted."""
    return _open_invitation(token)


def invitation_accept(*, token: str, user: User) -> Membership:
    """`user` joins the invitation's project with its role; the link is used up, and the
    inviter is told (after the commit; a mail server that is down costs the mail)."""
    with transaction.atomic():
        invitation = _open_invitation(token, lock=True)
        project = locked_project(invitation.project)
        if Membership.objects.filter(project=project, user=user).exists():
            raise ValidationError(
                _("%(username)s is already a member of %(project)s."),
                code="already_member",
                params={"username": user.get_username(), "project": project.slug},
            )
        membership = Membership.objects.create(project=project, user=user, role=invitation.role)
        invitation.accepted_at = timezone.now()
        invitation.accepted_by = user
        invitation.save(update_fields=["accepted_at", "accepted_by"])
        # The link's holder accepts, signed in as `user` or signed up by this very request.
        audit_record(
            project, AuditAction.MEMBER_JOINED, f"member:{user.get_username()}",
            changes={"role": (None, invitation.role), "invitation": (None, invitation.email)},
            actor=user_actor(user.pk, user.get_username()),
        )  # fmt: skip
        transaction.on_commit(lambda: _tell_inviter(invitation, user))
    return membership


def invitation_accept_new_account(*, token: str, username: str, password: str) -> Membership:
    """A new account, with the invitation's address as its own (the link was read there),
    that accepts the invitation: both or neither."""
    with transaction.atomic():
        invitation = _open_invitation(token, lock=True)
        if User.objects.filter(username__iexact=username).exists():
            raise ValidationError(
                _("The username %(username)s is taken; choose another."),
                code="username_taken",
                params={"username": username},
            )
        user = User(username=username, email=invitation.email)
        try:
            user.full_clean(exclude=["password"])
        except ValidationError as exc:
            raise ValidationError(" ".join(exc.messages), code="invalid_username") from None
        try:
            validate_password(password, user)
        except ValidationError as exc:
            raise ValidationError(" ".join(exc.messages), code="weak_password") from None
        user.set_password(password)
        try:
            with transaction.atomic():
                user.save()
        except IntegrityError:  # taken by a concurrent sign-up
            raise ValidationError(
                _("The username %(username)s is taken; choose another."),
                code="username_taken",
                params={"username": username},
            ) from None
        return invitation_accept(token=token, user=user)


def _tell_inviter(invitation: Invitation, user: User) -> None:
    inviter = invitation.invited_by
    if inviter is None or not inviter.email:
        return
    project = invitation.project
    with in_language_of(inviter):
        context = {
            "inviter": inviter.get_username(),
            "email": invitation.email,
            "username": user.get_username(),
            "project": project.name or project.slug,
            "role": Role(invitation.role).label,
            "members_url": dashboard_url(reverse("dashboard:members", args=[project.slug])),
        }
        text = render_to_string("notifications/invitation_accepted.txt", context)
        subject = _("[%(project)s] Invitation accepted") % {"project": context["project"]}
    try:
        send_mail(subject, text, None, [inviter.email])
    except (smtplib.SMTPException, OSError):
        log.exception("telling the inviter of invitation %s failed", invitation.pk)
