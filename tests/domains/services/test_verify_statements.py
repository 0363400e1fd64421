"""A sweep's batch writes its domains' rows with one UPDATE, however many domains it
holds: the statements a batch costs do not grow with it, and each domain still ends
where its own check puts it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from domains.choices import CertState, State
from domains.models import Domain, DomainEvent
from domains.services.verification import domain_check_many
from tests.fixtures.domains import TARGET

pytestmark = pytest.mark.django_db

# What the sweep meets: claims that verify, claims pointing elsewhere or at nothing, and
# live domains that still verify or just lost their record.
KINDS = ("verifies", "elsewhere", "nothing", "live", "live, record gone")


@pytest.fixture(autouse=True)
def patient_dns(settings):
    """Up to fifty names asked at once: room for a busy machine's loopback server."""
    settings.DOMAINS_DNS_TIMEOUT, settings.DOMAINS_DNS_LIFETIME = 2.0, 5.0


def batch(shop, dns_server, prefix: str, per_kind: int) -> dict[str, list[int]]:
    """`per_kind` domains of each kind, due now: their ids by kind."""
    now = timezone.now()
    rows: dict[str, list[Domain]] = {kind: [] for kind in KINDS}
    for kind in KINDS:
        for i in range(per_kind):
            host = f"{prefix}{i}-{kind.replace(', ', '-').replace(' ', '-')}.example.test"
            if kind in ("verifies", "live"):
                dns_server.add(host, "CNAME", TARGET + ".")
            elif kind == "elsewhere":
                dns_server.add(host, "CNAME", "elsewhere.example.net.")
            live = kind.startswith("live")
            rows[kind].append(
                Domain(
                    project=shop,
                    hostname=host,
                    window_started_at=now,
                    next_check_at=now - timedelta(minutes=1),
                    **(
                        {
                            "state": State.ACTIVE,
                            "cert_state": CertState.ISSUED,
                            "check_code": "ok",
                            "verified_at": now,
                        }
                        if live
                        else {}
                    ),
                )
            )
    Domain.objects.bulk_create([domain for domains in rows.values() for domain in domains])
    return {kind: [domain.pk for domain in domains] for kind, domains in rows.items()}


def domain_updates(ids: dict[str, list[int]]) -> int:
    """The UPDATEs of domain rows that checking the batch costs."""
    table = Domain._meta.db_table
    with CaptureQueriesContext(connection) as queries:
        recorded = domain_check_many(domain_ids=[pk for pks in ids.values() for pk in pks])
    assert len(recorded.domains) == sum(len(pks) for pks in ids.values())
    return sum(1 for query in queries if query["sql"].startswith(f'UPDATE "{table}"'))


def test_a_batchs_row_writes_do_not_grow_with_its_domains(dns_server, shop):
    small = batch(shop, dns_server, "s", per_kind=2)
    large = batch(shop, dns_server, "l", per_kind=10)

    assert domain_updates(small) == domain_updates(large)


def test_each_domain_of_a_batch_written_together_ends_where_its_check_puts_it(dns_server, shop):
    ids = batch(shop, dns_server, "d", per_kind=3)
    started = timezone.now()

    domain_updates(ids)

    def states(kind: str) -> set[tuple[str, str]]:
        rows = Domain.objects.filter(pk__in=ids[kind], checked_at__gte=started)
        assert rows.count() == len(ids[kind])
        return set(rows.values_list("state", "check_code"))

    assert states("verifies") == {(State.ISSUING, "ok")}
    assert states("elsewhere") == {(State.PENDING, "wrong_target")}
    assert states("nothing") == {(State.PENDING, "nxdomain")}
    assert states("live") == {(State.ACTIVE, "ok")}
    assert states("live, record gone") == {(State.ACTIVE, "nxdomain")}
    gone = Domain.objects.filter(pk__in=ids["live, record gone"])
    assert not gone.filter(failing_since__isnull=True).exists()
    assert all("no longer" in domain.check_message for domain in gone)
    events = DomainEvent.objects.filter(domain_id__in=[pk for pks in ids.values() for pk in pks])
    assert events.filter(action="verified").count() == 3
    assert events.filter(action="stopped_verifying").count() == 3
    assert events.filter(action="check_failed").count() == 6
