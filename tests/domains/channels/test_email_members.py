"""A project's events are mailed to each of its owners and admins, by each one's own
choice of events (Settings → Notifications), as one digest per member; developers and
viewers are not mailed, and a member removed or demoted before the mail goes is not."""

from __future__ import annotations

from datetime import timedelta

import pytest

from domains.channels import CHANNELS
from domains.choices import DeliveryState, EventType, Role
from domains.models import Delivery, Membership
from domains.policy import DIGEST_WINDOW
from domains.services import members
from domains.services.events import record_owner_event
from domains.services.notifications import notification_preference_save
from domains.tasks import deliver
from tests.fixtures.domains import T0

pytestmark = pytest.mark.django_db
EMAIL = CHANNELS["email"]


def _failing(shop, hostname="www.example.test"):
    record_owner_event(
        project=shop, domain=None, hostname=hostname, type=EventType.DOMAIN_FAILING,
        message=f"{hostname} stopped verifying.",
    )  # fmt: skip


def _send_due(time_machine) -> None:
    time_machine.move_to(T0 + DIGEST_WINDOW + timedelta(seconds=1), tick=False)
    for delivery_id in EMAIL.due():
        deliver("email", delivery_id)


def test_owners_and_admins_are_mailed_each_by_their_own_choice(
    smtp_server, shop, team, time_machine
):
    time_machine.move_to(T0, tick=False)
    _failing(shop)
    record_owner_event(
        project=shop, domain=None, hostname="www.example.test", type=EventType.DOMAIN_ACTIVE,
        message="www.example.test is live.",
    )  # fmt: skip
    # dave (admin) chooses the live domain too; alice keeps the default (failures only).
    notification_preference_save(
        user=team[Role.ADMIN], email_events=[EventType.DOMAIN_FAILING, EventType.DOMAIN_ACTIVE]
    )
    _send_due(time_machine)

    by_address = {mail["To"]: mail for mail in smtp_server.messages}
    assert sorted(by_address) == ["alice@example.test", "dave@example.test"]
    assert by_address["alice@example.test"]["Subject"] == (
        "www.example.test: A check of a live domain failed"
    )
    assert by_address["dave@example.test"]["Subject"] == "2 updates about the domains of shop"
    targets = set(Delivery.objects.filter(channel="email").values_list("target_id", flat=True))
    mailed = Membership.objects.filter(project=shop, role__in=[Role.OWNER, Role.ADMIN])
    assert targets == set(mailed.values_list("pk", flat=True))


def test_a_member_removed_or_demoted_before_the_mail_goes_is_not_mailed(
    smtp_server, shop, team, time_machine
):
    time_machine.move_to(T0, tick=False)
    _failing(shop)
    dave = Membership.objects.get(project=shop, user=team[Role.ADMIN])
    members.member_change_role(project=shop, membership_id=dave.pk, role="viewer", actor=None)
    _send_due(time_machine)

    assert [mail["To"] for mail in smtp_server.messages] == ["alice@example.test"]
    skipped = Delivery.objects.get(channel="email", target_id=dave.pk)
    assert skipped.state == DeliveryState.SKIPPED
