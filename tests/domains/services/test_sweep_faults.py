"""The sweep with a domain the database refuses: the others are still checked and
certified, the refused one is logged and counted, and each stage is bounded.

The database refuses through a trigger the test installs (inside the test's transaction,
so it goes with it): every UPDATE or DELETE of that one domain's row raises, at whichever
stage of the sweep it is met.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from domains import tasks
from domains.choices import State
from domains.models import Domain
from domains.services import scheduling
from petstore.models import TaskFailure
from tests.fixtures.domains import in_step

pytestmark = pytest.mark.django_db

DAY = timedelta(days=1)


def refuse(domain: Domain) -> None:
    """From now on the database refuses every change to this one domain's row."""
    table = Domain._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            CREATE FUNCTION refuse_one_domain() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF OLD.id = {int(domain.pk)} THEN
                    RAISE EXCEPTION 'the test refuses domain %', OLD.id;
                END IF;
                IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER refuse_one_domain BEFORE UPDATE OR DELETE ON {table}
                FOR EACH ROW EXECUTE FUNCTION refuse_one_domain();
            """
        )


def due_check(shop, name: str) -> Domain:
    return Domain.objects.create(
        project=shop, hostname=name, next_check_at=timezone.now() - timedelta(minutes=1)
    )


def expired_claim(shop, name: str) -> Domain:
    return Domain.objects.create(project=shop, hostname=name, created_at=timezone.now() - 30 * DAY)


def lost_certificate(shop, name: str) -> Domain:
    now = timezone.now()
    return Domain.objects.create(
        project=shop,
        hostname=name,
        verified_at=now - DAY,
        cert_requested_at=now - DAY,
        **in_step(State.ISSUING),
    )


def verified(shop, name: str) -> Domain:
    return Domain.objects.create(
        project=shop, hostname=name, verified_at=timezone.now(), **in_step(State.VERIFIED)
    )


KINDS = {
    "an expired claim": expired_claim,
    "a due check": due_check,
    "lost certificate work": lost_certificate,
    "a verified domain without a certificate": verified,
}


@pytest.mark.parametrize("kind", KINDS)
def test_a_domain_the_database_refuses_leaves_every_other_domain_checked_and_certified(
    shop, kind, django_capture_on_commit_callbacks
):
    others = {
        name: make(shop, f"{name.replace(' ', '-')}.example.test") for name, make in KINDS.items()
    }
    refused = KINDS[kind](shop, "refused.example.test")
    refuse(refused)

    with django_capture_on_commit_callbacks() as queued:
        steps = scheduling.sweep()

    assert steps.checks == [others["a due check"].pk]
    assert steps.issue_now == [others["lost certificate work"].pk]
    assert steps.issue == [others["a verified domain without a certificate"].pk]
    assert not Domain.objects.filter(pk=others["an expired claim"].pk).exists()
    assert Domain.objects.get(pk=others["a verified domain without a certificate"].pk).state == (
        State.ISSUING
    )
    # The refused domain is untouched, counted and named.
    assert Domain.objects.filter(pk=refused.pk).exists()
    failure = TaskFailure.objects.get(task_name=scheduling.FAILURE_NAME)
    assert failure.count == 1
    assert f"domain {refused.pk}," in failure.last_error
    assert "the test refuses domain" in failure.last_error
    assert queued == []  # the service queues nothing itself

    # The task queues the checks and the certificates of the others.
    Domain.objects.filter(pk=others["a due check"].pk).update(next_check_at=timezone.now())
    with django_capture_on_commit_callbacks() as queued:
        tasks.sweep()
    assert len(queued) == 1  # the due check's batch (the rest was done by the first sweep)


def test_the_sweep_logs_the_refused_domain_by_its_id(shop, caplog):
    due_check(shop, "fine.example.test")
    refused = due_check(shop, "refused.example.test")
    refuse(refused)

    steps = scheduling.sweep()

    assert len(steps.checks) == 1 and refused.pk not in steps.checks
    assert f"domain {refused.pk} failed while claiming its check" in caplog.text


def test_every_stage_of_one_sweep_is_bounded(shop, monkeypatch):
    monkeypatch.setattr(scheduling, "SWEEP_LIMIT", 2)
    for i in range(3):
        for name, make in KINDS.items():
            make(shop, f"{i}-{name.replace(' ', '-')}.example.test")

    steps = scheduling.sweep()

    assert (len(steps.checks), len(steps.issue_now), len(steps.issue)) == (2, 2, 2)
    assert Domain.objects.filter(hostname__endswith="an-expired-claim.example.test").count() == 1
    # The next sweep takes the rest.
    steps = scheduling.sweep()
    assert (len(steps.checks), len(steps.issue_now), len(steps.issue)) == (1, 1, 1)
    assert not Domain.objects.filter(hostname__endswith="an-expired-claim.example.test").exists()
