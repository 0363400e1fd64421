"""Owners are told by email: the events the services record, collected per project into
one digest, sent through a real SMTP server on loopback (tests/fixtures/smtp.py)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest
from django.test import Client

from domains import tasks
from domains.channels import CHANNELS
from domains.choices import ACTION_NEEDED_EVENTS, DeliveryState, EventType
from domains.models import Delivery, Membership
from domains.policy import DIGEST_WINDOW
from domains.selectors import email_choices
from domains.services.custom_domains import domain_add
from domains.services.events import record_owner_event
from domains.services.projects import deploy_record, project_create
from petstore.metrics import store
from petstore.models import TaskFailure
from tests.fixtures.domains import T0

pytestmark = pytest.mark.django_db
LATER = DIGEST_WINDOW + timedelta(seconds=1)
EMAIL = CHANNELS["email"]
MAILS = Delivery.objects.filter(channel="email")


@pytest.fixture
def alice(alice):
    alice.email = "alice@example.test"
    alice.save()
    return alice


def mails_counted() -> dict[str, float]:
    """petstore_email_deliveries_total by outcome, as this process counted them."""
    return {
        outcome: store.REGISTRY.get_sample_value(
            "petstore_email_deliveries_total", {"outcome": outcome}
        )
        or 0.0
        for outcome in ("delivered", "failed")
    }


def send_due(time_machine, at: datetime) -> None:
    """What beat and the worker do at `at`: every due project's digest."""
    time_machine.move_to(at, tick=False)
    for delivery_id in EMAIL.due():
        tasks.deliver("email", delivery_id)


def test_a_live_domain_whose_cname_leaves_mails_its_owner_once_saying_when_it_stops(
    smtp_server, dns_server, active, alice, alice_client, time_machine
):
    dns_server.remove("www.example.test")  # the owner left; the CNAME is gone
    failed_at = T0 + timedelta(hours=6)
    time_machine.move_to(failed_at, tick=False)
    tasks.check_domains([active.pk])  # the sweep's batch, as the worker runs it
    send_due(time_machine, failed_at + LATER)
    # Checks go on failing within the grace period: nothing new to tell.
    time_machine.move_to(failed_at + timedelta(hours=1), tick=False)
    tasks.check_domains([active.pk])
    send_due(time_machine, failed_at + timedelta(hours=1) + LATER)

    [mail] = smtp_server.messages
    assert mail["To"] == "alice@example.test"
    assert mail["Subject"] == "www.example.test: A check of a live domain failed"
    text = smtp_server.text(mail)
    assert "Stops serving at: 2026-11-04 18:00 UTC" in text  # 48 hours after the failure
    assert "/dashboard/projects/shop/domains/www.example.test/" in text
    assert "Stops serving at: 2026-11-04 18:00 UTC" in smtp_server.html(mail)
    # The domain's page says when its owner was last told, and about what.
    page = alice_client.get("/dashboard/projects/shop/domains/www.example.test/")
    told = page.content.decode()
    assert "2026-11-02 18:02:01 UTC</time> by email" in told
    assert "domain.failing" in told


def test_fifty_events_in_a_minute_are_one_digest(smtp_server, shop, alice, time_machine):
    time_machine.move_to(T0, tick=False)
    for second in range(50):
        time_machine.move_to(T0 + timedelta(seconds=second * 1.2), tick=False)
        record_owner_event(
            project=shop,
            domain=None,
            hostname=f"host{second}.example.test",
            type=EventType.CLAIM_EXPIRED,
            message=f"host{second}.example.test never verified.",
        )
    send_due(time_machine, T0 + timedelta(seconds=90))  # collected, not due yet
    assert smtp_server.messages == []
    send_due(time_machine, T0 + LATER)
    [digest] = smtp_server.messages
    assert digest["Subject"] == "50 updates about the domains of shop"
    text = smtp_server.text(digest)
    assert all(f"host{n}.example.test never verified." in text for n in range(50))
    assert set(MAILS.values_list("state", flat=True)) == {DeliveryState.DELIVERED}


def test_the_same_event_for_the_same_domain_is_mailed_once_a_day(
    smtp_server, www, bobs, bob, alice, time_machine
):
    other = project_create(slug="bobs-other", owner=bob, plan="pro")
    deploy_record(project=other, html="<h1>Another</h1>")
    time_machine.move_to(T0, tick=False)
    domain_add(project=bobs, hostname="www.example.test", actor=bob)
    send_due(time_machine, T0 + LATER)
    time_machine.move_to(T0 + timedelta(hours=3), tick=False)
    domain_add(project=other, hostname="www.example.test", actor=bob)  # contested again
    send_due(time_machine, T0 + timedelta(hours=3) + LATER)

    [mail] = smtp_server.messages
    assert "Another project claimed the name" in mail["Subject"]
    owner = Membership.objects.get(project=www.project, user=alice)
    told = MAILS.filter(target_id=owner.pk).order_by("event__occurred_at")
    assert list(told.values_list("state", flat=True)) == [
        DeliveryState.DELIVERED,
        DeliveryState.SKIPPED,
    ]
    # A day later the same news is news again.
    time_machine.move_to(T0 + timedelta(days=1, hours=1), tick=False)
    third = project_create(slug="bobs-third", owner=bob, plan="pro")
    deploy_record(project=third, html="<h1>A third</h1>")
    domain_add(project=third, hostname="www.example.test", actor=bob)
    send_due(time_machine, T0 + timedelta(days=1, hours=1) + LATER)
    assert len(smtp_server.messages) == 2


def test_an_owner_who_turned_an_event_off_gets_no_mail(
    smtp_server, www, bobs, bob, alice, alice_client, time_machine
):
    page = alice_client.get("/dashboard/settings/notifications/").content.decode()
    # The default: everything that needs action, nothing that does not.
    assert re.search(r'value="claim.contested" id="[^"]+" checked', page)
    assert not re.search(r'value="domain.active" id="[^"]+" checked', page)
    chosen = [EventType.DOMAIN_FAILING, EventType.DOMAIN_STOPPED]
    answer = alice_client.post("/dashboard/settings/notifications/", {"email_events": chosen})
    assert answer.status_code == 302
    time_machine.move_to(T0, tick=False)
    domain_add(project=bobs, hostname="www.example.test", actor=bob)  # claim.contested
    send_due(time_machine, T0 + LATER)
    assert smtp_server.messages == []
    assert MAILS.get().state == DeliveryState.SKIPPED
    page = alice_client.get("/dashboard/settings/notifications/").content.decode()
    assert not re.search(r'value="claim.contested" id="[^"]+" checked', page)


def test_the_settings_form_refuses_an_unknown_event_type(alice_client):
    answer = alice_client.post(
        "/dashboard/settings/notifications/", {"email_events": ["domain.deleted"]}
    )
    assert answer.status_code == 200
    assert "Select a valid choice" in answer.content.decode()


def test_a_mail_server_that_refuses_delays_the_mail_never_the_change(
    smtp_server, www, bobs, bob, alice, time_machine
):
    before = mails_counted()
    smtp_server.refuse = True  # 451: try again later
    time_machine.move_to(T0, tick=False)
    rival = domain_add(project=bobs, hostname="www.example.test", actor=bob)
    assert rival.pk is not None  # the change committed; its event waits in the outbox
    send_due(time_machine, T0 + LATER)
    assert smtp_server.refused == 1
    mail = MAILS.get()
    assert (mail.state, mail.attempts) == (DeliveryState.PENDING, 1)
    assert (
        "451" in mail.attempt_log.latest("attempted_at", "pk").response
    )  # the server's words, in the attempt log
    send_due(time_machine, T0 + LATER + timedelta(seconds=30))  # backoff not over
    assert smtp_server.refused == 1
    smtp_server.refuse = False  # the server is back
    send_due(time_machine, T0 + LATER + EMAIL.backoff[0])
    [sent] = smtp_server.messages
    assert "www.example.test" in sent["Subject"]
    assert MAILS.get().state == DeliveryState.DELIVERED
    assert [a.ok for a in MAILS.get().attempt_log.all()] == [False, True]
    # Each mail counted by its outcome: what PetstoreEmailDeliveriesFailing watches.
    after = mails_counted()
    assert {outcome: after[outcome] - before[outcome] for outcome in after} == {
        "delivered": 1,
        "failed": 1,
    }


def test_a_mail_that_fails_every_retry_is_marked_failed_and_counted(
    smtp_server, www, bobs, bob, alice, time_machine
):
    smtp_server.refuse = True
    at = T0
    time_machine.move_to(at, tick=False)
    domain_add(project=bobs, hostname="www.example.test", actor=bob)
    at += LATER
    for backoff in (*EMAIL.backoff, timedelta(0)):
        send_due(time_machine, at)
        at += backoff
    assert smtp_server.refused == EMAIL.max_attempts
    assert MAILS.get().state == DeliveryState.FAILED
    assert MAILS.get().attempt_log.count() == EMAIL.max_attempts
    failure = TaskFailure.objects.get(task_name="domains.channels.email")
    assert failure.count == 1


def test_two_senders_never_send_one_event_twice(smtp_server, www, bobs, bob, alice, time_machine):
    time_machine.move_to(T0, tick=False)
    domain_add(project=bobs, hostname="www.example.test", actor=bob)
    time_machine.move_to(T0 + LATER, tick=False)
    [due] = EMAIL.due()
    assert EMAIL.deliver(delivery_id=due) is not None
    assert EMAIL.deliver(delivery_id=due) is None  # claimed and sent: no longer due
    assert len(smtp_server.messages) == 1


def test_the_html_mail_escapes_what_a_tenant_wrote(smtp_server, shop, alice, time_machine):
    time_machine.move_to(T0, tick=False)
    record_owner_event(
        project=shop,
        domain=None,
        hostname="www.example.test",
        type=EventType.CLAIM_EXPIRED,
        message='<script>alert("x")</script>',
    )
    send_due(time_machine, T0 + LATER)
    [mail] = smtp_server.messages
    html = smtp_server.html(mail)
    assert "<script>" not in html
    assert "&lt;script&gt;" in html


def test_the_notification_settings_need_a_signed_in_user_and_are_their_own(
    alice_client, alice, bob
):
    assert Client().get("/dashboard/settings/notifications/").status_code == 302
    alice_client.post("/dashboard/settings/notifications/", {"email_events": []})
    assert email_choices(alice.pk) == frozenset()
    assert email_choices(bob.pk) == ACTION_NEEDED_EVENTS
    nav = alice_client.get("/dashboard/").content.decode()
    assert 'href="/dashboard/settings/notifications/"' in nav
