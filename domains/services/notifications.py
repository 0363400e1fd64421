"""The owner's choice of what reaches them (Settings → Notifications) and where
(Settings → Account).

Owner mail goes to the account's `email`, and only a confirmed change writes it:
`owner_email_change_request` mails a signed link to the new address and changes nothing;
`owner_email_confirm` writes the address when the link comes back, signed in as the same
user. The link carries the user, the new address and the one it replaces, so it works once
and goes stale at any other change of the address: no table of pending changes to keep.
"""

from __future__ import annotations

import logging
import smtplib
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.core import signing
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse

from domains.channels.email import dashboard_url
from domains.models import NotificationPreference
from domains.policy import EMAIL_CONFIRMATION_MAX_AGE, EMAIL_CONFIRMATIONS_PER_HOUR
from domains.services.events import event_types_clean
from petstore.taskfailures import describe

log = logging.getLogger(__name__)

# Signed links of this module only: no other signed value of the platform passes for one.
EMAIL_LINK_SALT = "domains.owner-email"
# The account's email column (django.contrib.auth's AbstractUser.email), RFC 5321's limit.
EMAIL_MAX_LENGTH = 254
HOUR = 3600


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
    """What a confirmation link says: this user's owner mail goes to `email` instead of
    `was` (empty: no address yet)."""

    user_id: int
    email: str
    was: str


def owner_email_clean(email: str) -> str:
    """The address as it is stored (its domain part in lower case), or a refusal."""
    address = User.objects.normalize_email(email.strip())
    if not address:
        raise ValidationError("Type the address owner mail should go to.", code="required")
    if len(address) > EMAIL_MAX_LENGTH:
        raise ValidationError(
            f"An address has at most {EMAIL_MAX_LENGTH} characters.", code="email_too_long"
        )
    try:
        validate_email(address)
    except ValidationError:
        raise ValidationError(
            f"{address} is not an email address (name@example.com).", code="invalid_email"
        ) from None
    return address


def confirmations_sent_key(user_id: int) -> str:
    """The cache's count of the confirmation mails sent for this user in the hour."""
    return f"owner-email-confirmations:{user_id}"


def owner_email_change_request(*, user: User, email: str) -> str:
    """Mail a confirmation link to `email`, which becomes the owner's address once the
    link is opened; returns the address as stored. Refused: not an address, already the
    account's, EMAIL_CONFIRMATIONS_PER_HOUR mails sent this hour, or the mail server
    refused (said with its words). Sent while the owner waits, like Django's password
    reset: they act on this very mail, so a refusal belongs on the form, not in a retry."""
    address = owner_email_clean(email)
    if address == user.email:
        raise ValidationError(f"Owner mail already goes to {address}.", code="email_unchanged")
    key = confirmations_sent_key(user.pk)
    if (cache.get(key) or 0) >= EMAIL_CONFIRMATIONS_PER_HOUR:
        raise ValidationError(
            f"{EMAIL_CONFIRMATIONS_PER_HOUR} confirmation mails were sent in the last hour, "
            "the most allowed; try again later, or open the link of one already sent.",
            code="email_confirm_limit",
        )
    change = {"user": user.pk, "email": address, "was": user.email}
    token = signing.dumps(change, salt=EMAIL_LINK_SALT, compress=True)
    context = {
        "username": user.get_username(),
        "link": dashboard_url(reverse("dashboard:account_confirm", args=[token])),
        "days": EMAIL_CONFIRMATION_MAX_AGE.days,
    }
    text = render_to_string("notifications/confirm_email.txt", context)
    try:
        send_mail("Confirm your address for domain notifications", text, None, [address])
    except (smtplib.SMTPException, OSError) as exc:
        raise ValidationError(
            f"The confirmation mail to {address} could not be sent ({describe(exc)}); try "
            "again in a few minutes.",
            code="email_not_sent",
        ) from None
    if not cache.add(key, 1, HOUR):  # the hour starts with the first mail
        cache.incr(key)
    return address


def _used_up(current: str) -> ValidationError:
    return ValidationError(
        f"This link is used up: owner mail has gone to {current or 'no address'} since it "
        "was sent. Type the address again on your account page for a new one.",
        code="email_link_used",
    )


def owner_email_change_read(*, user: User, token: str) -> EmailChange:
    """What a confirmation link asks of `user`'s account, or why it cannot be confirmed:
    not one of ours, too old, another account's, or used up (the address changed since)."""
    try:
        signed = signing.loads(token, salt=EMAIL_LINK_SALT, max_age=EMAIL_CONFIRMATION_MAX_AGE)
    except signing.SignatureExpired:
        raise ValidationError(
            f"This confirmation link is more than {EMAIL_CONFIRMATION_MAX_AGE.days} days old. "
            "Type the address again on your account page for a new one.",
            code="email_link_expired",
        ) from None
    except signing.BadSignature:
        raise ValidationError(
            "This is not a confirmation link of ours (part of it may be missing): open the "
            "link from the mail as it is.",
            code="email_link_invalid",
        ) from None
    change = EmailChange(user_id=signed["user"], email=signed["email"], was=signed["was"])
    if change.user_id != user.pk:
        raise ValidationError(
            "This link was sent for another account: sign in as that account to confirm it.",
            code="email_link_other_user",
        )
    if user.email != change.was:
        raise _used_up(user.email)
    return change


def owner_email_confirm(*, user: User, token: str) -> EmailChange:
    """Owner mail goes to the link's address from now on; the previous address, if any,
    is told (a change it did not expect is how its owner learns of a stolen session)."""
    change = owner_email_change_read(user=user, token=token)
    with transaction.atomic():
        current = User.objects.select_for_update().values_list("email", flat=True).get(pk=user.pk)
        if current != change.was:  # changed since `user` was read
            raise _used_up(current)
        User.objects.filter(pk=user.pk).update(email=change.email)
    user.email = change.email
    if change.was:
        context = {
            "username": user.get_username(),
            "email": change.email,
            "account_url": dashboard_url(reverse("dashboard:account")),
        }
        text = render_to_string("notifications/email_changed.txt", context)
        try:
            send_mail("Domain notifications now go to another address", text, None, [change.was])
        except (smtplib.SMTPException, OSError):
            log.exception("telling %s's previous address of the change failed", user.pk)
    return change
