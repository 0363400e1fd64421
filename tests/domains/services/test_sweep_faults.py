"""The sweep with a domain the database refuses (tests/fixtures/refusals.py, at whichever
stage of the sweep it is met): the others are still checked and certified, the refused one
is logged and counted, and each stage is bounded.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from domains import tasks
from domains.choices import State
from domains.models import Domain
from domains.services import scheduling
from petstore.models import TaskFailure
from tests.fixtures.domains import in_step
from tests.fixtures.refusals import refuse

pytestmark = pytest.mark.django_db

DAY = timedelta(days=1)


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
