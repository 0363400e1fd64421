"""The old outbox becomes deliveries, none lost: webhook deliveries keep their id, state,
attempts and last answer; email progress in the `email_*` columns becomes an email
delivery per event, in its state (migration 0013). Then the old table and columns leave
the models while the database keeps them for release 1.0.0's processes (migration 0020),
and the database a release later (0032).
Since 0023 an email delivery names the owner's membership, no longer the project."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from domains.models import Delivery, Membership, OwnerEvent, Project, WebhookEndpoint

pytestmark = pytest.mark.django_db(transaction=True)
T0 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


def migrate(*targets: tuple[str, str]):
    """The project's state after migrating the test database to these targets."""
    executor = MigrationExecutor(connection)
    return executor.migrate(list(targets or executor.loader.graph.leaf_nodes())).apps


def test_unsent_mail_and_every_webhook_delivery_become_deliveries():
    old = migrate(("domains", "0011_edge_version_generated"))
    user = old.get_model("auth", "User").objects.create(username="carol", email="c@example.test")
    project = old.get_model("domains", "Project").objects.create(slug="carols", owner=user)
    event = old.get_model("domains", "OwnerEvent")
    waiting = event.objects.create(
        project=project, hostname="a.example.test", type="domain.failing", occurred_at=T0,
        email_state="pending", email_attempts=2, email_due_at=T0 + timedelta(minutes=5),
    )  # fmt: skip
    mailed = event.objects.create(
        project=project, hostname="b.example.test", type="claim.lost", occurred_at=T0,
        email_state="sent", email_attempts=0, emailed_at=T0 + timedelta(minutes=2),
    )  # fmt: skip
    endpoint = old.get_model("domains", "WebhookEndpoint").objects.create(
        project=project, url="https://hooks.example.com/", events=["domain.failing"], secret="s"
    )
    hook = old.get_model("domains", "WebhookDelivery").objects.create(
        endpoint=endpoint, event=waiting, state="pending", attempts=3, status_code=503,
        duration_ms=40, response="busy", attempted_at=T0, next_attempt_at=T0 + timedelta(hours=1),
    )  # fmt: skip

    migrate()

    mail = Delivery.objects.get(channel="email", event_id=waiting.pk)
    # Mail goes to a member since migration 0023: the project's owner's membership, which
    # 0021 made its first member, an owner.
    owner = Membership.objects.get(project_id=project.pk, user_id=user.pk)
    assert owner.role == "owner"
    assert (mail.state, mail.attempts, mail.target_id) == ("pending", 2, owner.pk)
    assert mail.next_attempt_at == T0 + timedelta(minutes=5)
    sent = Delivery.objects.get(channel="email", event_id=mailed.pk)
    assert (sent.state, sent.finished_at) == ("delivered", T0 + timedelta(minutes=2))
    assert [a.ok for a in sent.attempt_log.all()] == [True]
    webhook = Delivery.objects.get(channel="webhook")
    assert webhook.pk == hook.pk  # a deliver_webhook message still queued names it
    assert (webhook.event_id, webhook.target_id, webhook.attempts) == (waiting.pk, endpoint.pk, 3)
    assert webhook.next_attempt_at == T0 + timedelta(hours=1)
    [attempt] = webhook.attempt_log.all()
    assert (attempt.status_code, attempt.duration_ms, attempt.response, attempt.ok) == (
        503, 40, "busy", False,
    )  # fmt: skip
    # New rows take ids after the carried ones.
    assert Delivery.objects.count() == 3


def old_outbox_in_database() -> bool:
    with connection.cursor() as cursor:
        tables = connection.introspection.table_names(cursor)
        columns = {c.name for c in connection.introspection.get_table_description(
            cursor, "domains_ownerevent"
        )}  # fmt: skip
    return "domains_webhookdelivery" in tables and "email_state" in columns


def test_the_old_outbox_leaves_the_models_then_the_database():
    old = migrate(("domains", "0018_certificate_renewal_info"))
    user = old.get_model("auth", "User").objects.create(username="dave", email="d@example.test")
    project = old.get_model("domains", "Project").objects.create(slug="daves", owner=user)
    event = old.get_model("domains", "OwnerEvent")
    # Written by a process before 1.0.0 during the deploy into it, after 0013 ran.
    late = event.objects.create(
        project=project, hostname="a.example.test", type="domain.failing", occurred_at=T0,
        email_state="pending", email_due_at=T0,
    )  # fmt: skip
    # Written by 1.0.0: its mail is the channels' (the email column says skipped).
    told = event.objects.create(
        project=project, hostname="b.example.test", type="claim.lost", occurred_at=T0,
        email_state="skipped",
    )  # fmt: skip
    endpoint = old.get_model("domains", "WebhookEndpoint").objects.create(
        project=project, url="https://hooks.example.com/", events=["domain.failing"], secret="s"
    )
    old.get_model("domains", "WebhookDelivery").objects.create(
        endpoint=endpoint, event=late, state="failed", attempts=5, status_code=500,
        attempted_at=T0, response="down",
    )  # fmt: skip

    migrate()

    mail = Delivery.objects.get(channel="email", event_id=late.pk)
    owner = Membership.objects.get(project_id=project.pk, user_id=user.pk)
    assert (mail.state, mail.target_id) == ("pending", owner.pk)
    assert not Delivery.objects.filter(channel="email", event_id=told.pk).exists()
    webhook = Delivery.objects.get(channel="webhook", event_id=late.pk)
    assert (webhook.state, webhook.attempts, webhook.finished_at) == ("failed", 5, T0)
    assert [a.status_code for a in webhook.attempt_log.all()] == [500]
    # 0032 drops the old table and columns; going back makes them again, empty and with the
    # defaults 0020 gave them.
    assert not old_outbox_in_database()
    fresh = OwnerEvent.objects.create(
        project=Project.objects.get(pk=project.pk), hostname="c.example.test", type="claim.lost"
    )
    migrate(("domains", "0031_sweep_stages_partial_indexes"))
    assert old_outbox_in_database()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT email_state, email_attempts, email_due_at IS NOT NULL, email_claim,"
            " emailed_at FROM domains_ownerevent WHERE id = %s",
            [fresh.pk],
        )
        assert cursor.fetchone() == ("skipped", 0, True, None, None)
        cursor.execute("SELECT id, endpoint_id, event_id, state FROM domains_webhookdelivery")
        assert cursor.fetchall() == []
    migrate()
    assert not old_outbox_in_database()
    # Deleting what the old table referred to no longer touches it.
    WebhookEndpoint.objects.filter(pk=endpoint.pk).delete()
    OwnerEvent.objects.filter(pk=late.pk).delete()
    assert not OwnerEvent.objects.filter(pk=late.pk).exists()
