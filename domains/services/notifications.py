"""The owner's choice of what reaches them (Settings → Notifications) and where
(Settings → Account).

Owner mail goes to the account's `email`, and only a confirmed change writes it:
`owner_email_change_request` mails a link to the new address and changes nothing;
`owner_email_confirm` writes the address when the link comes back, signed in as the same
user. The link carries only a random secret; its row (`OwnerEmailChange`, keeping the
secret's digest) says whose it is and where it points, and is closed when the link is used
and when the address changes by any other link, so a link works once and never after a
later change. Asking for a change takes the current password (the dashboard's form,
petstore/http/reauth.py): a stolen session cannot move the account's mail.
"""

from __future__ import annotations

import logging
import smtplib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from domains.channels.email import dashboard_url
from domains.models import NotificationPreference, OwnerEmailChange, link_digest, new_link_secret
from domains.policy import EMAIL_CONFIRMATION_MAX_AGE, EMAIL_CONFIRMATIONS_PER_HOUR
from domains.services.events import event_types_clean
from petstore.languages import in_language_of
from petstore.taskfailures import describe

log = logging.getLogger(__name__)

# The account's email column (django.contrib.auth's AbstractUser.email), RFC 5321's limit.
EMAIL_MAX_LENGTH = 254
HOUR = timedelta(hours=1)


def notification_preference_save(
    *, user: User, email_events: Iterable[str]
) -> NotificationPreference:
    """Which event types reach `user` by email; any other value is refused."""
    chosen = event_types_clean(email_events)
    preference, _ = NotificationPreference.objects.update_or_create(
        user=user, defaults={"email_events": chosen}
    )
    return preference


@dataclass(frozen=True)
class EmailChange:
    """What a confirmation link asks: this user's owner mail goes to `email` instead of
    `was` (empty: no address yet)."""

    email: str
    was: str


def owner_email_clean(email: str) -> str:
    """The address as it is stored (its domain part in lower case), or a refusal."""
    address = User.objects.normalize_email(email.strip())
    return address_checked(address, missing=_("Type the address owner mail should go to."))


def address_checked(address: str, *, missing: str) -> str:
    """`address` if it is one mail can go to; a refusal naming what is wrong otherwise
    (`missing`: what to say when there is none)."""
    if not address:
        raise ValidationError(missing, code="required")
    if len(address) > EMAIL_MAX_LENGTH:
        raise ValidationError(
            _("An address has at most %(length)d characters."),
            code="email_too_long",
            params={"length": EMAIL_MAX_LENGTH},
        )
    try:
        validate_email(address)
    except ValidationError:
        raise ValidationError(
            _("%(address)s is not an email address (name@example.com)."),
            code="invalid_email",
            params={"address": address},
        ) from None
    return address


def owner_email_change_request(*, user: User, email: str) -> str:
    """Mail a confirmation link to `email`, which becomes the owner's address once the
    link is opened; returns the address as stored. Refused: not an address, already the
    account's, EMAIL_CONFIRMATIONS_PER_HOUR mails sent this hour, or the mail server
    refused (said with its words). Sent while the owner waits: they act on this very
    mail, so a refusal belongs on the form, not in a retry.

    The link's row is written before the mail goes, under the user's row lock, and the
    hour's count is a count of those rows: requests at the same moment queue on the lock
    and each sees the rows of the ones before it, so no burst sends more than the limit.
    A mail the server refused takes its row back, and with it its place in the count."""
    address = owner_email_clean(email)
    secret = new_link_secret()
    now = timezone.now()
    with transaction.atomic():
        current = User.objects.select_for_update().values_list("email", flat=True).get(pk=user.pk)
        if address == current:
            raise ValidationError(
                _("Owner mail already goes to %(address)s."),
                code="email_unchanged",
                params={"address": address},
            )
        changes = OwnerEmailChange.objects.filter(user=user)
        changes.filter(created_at__lt=now - EMAIL_CONFIRMATION_MAX_AGE).delete()
        if changes.filter(created_at__gt=now - HOUR).count() >= EMAIL_CONFIRMATIONS_PER_HOUR:
            raise ValidationError(
                _(
                    "%(limit)d confirmation mails were sent in the last hour, the most "
                    "allowed; try again later, or open the link of one already sent."
                ),
                code="email_confirm_limit",
                params={"limit": EMAIL_CONFIRMATIONS_PER_HOUR},
            )
        change = OwnerEmailChange.objects.create(
            user=user, digest=link_digest(secret), email=address, was=current, created_at=now
        )
    context = {
        "username": user.get_username(),
        "link": dashboard_url(reverse("dashboard:account_confirm", args=[secret])),
        "days": EMAIL_CONFIRMATION_MAX_AGE.days,
    }
    with in_language_of(user):
        text = render_to_string("notifications/confirm_email.txt", context)
        subject = _("Confirm your address for domain notifications")
    try:
        send_mail(subject, text, None, [address])
    except (smtplib.SMTPException, OSError) as exc:
        change.delete()
        raise ValidationError(
            _(
                "The confirmation mail to %(address)s could not be sent (%(reason)s); try "
                "again in a few minutes."
            ),
            code="email_not_sent",
            params={"address": address, "reason": describe(exc)},
        ) from None
    return address


def _used_up(current: str) -> ValidationError:
    return ValidationError(
        _(
            "This link is used up: owner mail has gone to %(address)s since it was sent. "
            "Type the address again on your account page for a new one."
        ),
        code="email_link_used",
        params={"address": current or _("no address")},
    )


def _link_change(*, user: User, token: str) -> OwnerEmailChange:
    """The open change `token` is the link of, for `user`, or why it cannot be confirmed:
    not one of ours, another account's, too old, or used up (it was confirmed, or the
    address changed since it was sent)."""
    change = OwnerEmailChange.objects.filter(digest=link_digest(token)).first()
    if change is None:
        raise ValidationError(
            _(
                "This is not a confirmation link of ours (part of it may be missing): open "
                "the link from the mail as it is."
            ),
            code="email_link_invalid",
        )
    if change.user_id != user.pk:
        raise ValidationError(
            _("This link was sent for another account: sign in as that account to confirm it."),
            code="email_link_other_user",
        )
    if change.created_at <= timezone.now() - EMAIL_CONFIRMATION_MAX_AGE:
        raise ValidationError(
            _(
                "This confirmation link is more than %(days)d days old. Type the address "
                "again on your account page for a new one."
            ),
            code="email_link_expired",
            params={"days": EMAIL_CONFIRMATION_MAX_AGE.days},
        )
    if change.closed_at is not None or user.email != change.was:
        raise _used_up(user.email)
    return change


def owner_email_change_read(*, user: User, token: str) -> EmailChange:
    """What a confirmation link asks of `user`'s account, or why it cannot be confirmed."""
    change = _link_change(user=user, token=token)
    return EmailChange(email=change.email, was=change.was)


def owner_email_confirm(*, user: User, token: str) -> EmailChange:
    """Owner mail goes to the link's address from now on, and every open link of the user
    is closed (this one used, the others voided by the change); the previous address, if
    any, is told (a change it did not expect is how its owner learns of a stolen
    session)."""
    change = _link_change(user=user, token=token)
    now = timezone.now()
    with transaction.atomic():
        current = User.objects.select_for_update().values_list("email", flat=True).get(pk=user.pk)
        opened = OwnerEmailChange.objects.filter(user=user, closed_at__isnull=True)
        if current != change.was or not opened.filter(pk=change.pk).exists():
            raise _used_up(current)  # confirmed, or changed, since `user` was read
        opened.update(closed_at=now)
        User.objects.filter(pk=user.pk).update(email=change.email)
    user.email = change.email
    if change.was:
        context = {
            "username": user.get_username(),
            "email": change.email,
            "account_url": dashboard_url(reverse("dashboard:account")),
            "password_url": dashboard_url(reverse("password_change")),
        }
        with in_language_of(user):
            text = render_to_string("notifications/email_changed.txt", context)
            subject = _("Domain notifications now go to another address")
        try:
            send_mail(subject, text, None, [change.was])
        except (smtplib.SMTPException, OSError):
            log.exception("telling %s's previous address of the change failed", user.pk)
    return EmailChange(email=change.email, was=change.was)
