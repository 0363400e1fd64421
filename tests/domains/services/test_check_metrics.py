"""petstore_domain_checks_total counts each check recorded once, when it commits: not the
attempt a batch rolls back before recording one by one, not a transaction that fails."""

from __future__ import annotations

import pytest
from django.db import transaction

from domains import metrics
from domains.models import Domain
from domains.services.custom_domains import domain_add
from domains.services.verification import domain_check, domain_check_many
from tests.fixtures.refusals import refuse

pytestmark = pytest.mark.django_db


def counted(code: str) -> float:
    for family in metrics.CHECKS.collect():
        for sample in family.samples:
            if sample.name.endswith("_total") and sample.labels == {"code": code}:
                return sample.value
    return 0.0


@pytest.fixture
def three(dns_server, shop, alice):
    """Three claims with no DNS records at all: each check says nxdomain."""
    return [domain_add(project=shop, hostname=f"d{i}.example.test", actor=alice) for i in range(3)]


def test_a_batch_that_falls_back_to_one_by_one_counts_each_recorded_check_once(
    three, django_capture_on_commit_callbacks
):
    refuse(three[1])  # the batch's first attempt fails on it, then each is recorded alone
    before = counted("nxdomain")

    with django_capture_on_commit_callbacks(execute=True):
        recorded = domain_check_many(domain_ids=[domain.pk for domain in three])

    assert sorted(d.pk for d in recorded.domains) == [three[0].pk, three[2].pk]
    assert counted("nxdomain") - before == 2


def test_a_batch_recorded_at_once_counts_each_check_once(three, django_capture_on_commit_callbacks):
    before = counted("nxdomain")
    with django_capture_on_commit_callbacks(execute=True):
        domain_check_many(domain_ids=[domain.pk for domain in three])
    assert counted("nxdomain") - before == 3
    assert set(Domain.objects.values_list("check_code", flat=True)) == {"nxdomain"}


def test_a_check_whose_transaction_fails_is_not_counted(three, django_capture_on_commit_callbacks):
    before = counted("nxdomain")
    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        domain_check(domain_id=three[0].pk)
        raise RuntimeError("the caller's transaction fails")
    assert counted("nxdomain") - before == 0
