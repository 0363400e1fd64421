"""The sweep's batch checks, against the real DNS server on loopback.

A batch asks every DNS question at once, then records each result through the
same code as a single check: so each domain must end exactly where a single
check would leave it, running a batch twice must be harmless, and a domain
removed while its batch is in flight is skipped.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from celery.exceptions import Retry
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from domains import tasks
from domains.choices import EventType, State
from domains.dns import diagnosis
from domains.models import Domain, DomainEvent, OwnerEvent
from domains.policy import sweep_lease
from domains.services import scheduling
from domains.services.custom_domains import domain_add, domain_remove
from domains.services.events import record_owner_event
from domains.services.verification import domain_check, domain_check_many
from petstore.celery import app
from tests.fixtures import commits
from tests.fixtures.domains import TARGET, in_step, run_at_once
from tests.processes import wait_for

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

# host name -> the code a check gives it, with the records set in `mixed` below.
EXPECTED = {
    "ok.example.test": "ok",
    "elsewhere.example.test": "wrong_target",
    "a-instead.example.test": "conflicting_record",
    "a-beside.example.test": "conflicting_record",
    "txt-only.example.test": "no_record",
    "missing.example.test": "nxdomain",
    "slow.example.test": "dns_timeout",
    "broken.example.test": "dns_servfail",
    "example.test": "ok",  # the apex, flattened to the target's addresses
}


@pytest.fixture
def clock():
    with time_machine.travel(T0, tick=False) as traveller:
        yield traveller


@pytest.fixture
def mixed(dns_server, shop, alice):
    """One domain of each kind, with its records on the loopback DNS server."""
    dns_server.add("ok.example.test", "CNAME", TARGET + ".")
    dns_server.add("elsewhere.example.test", "CNAME", "shops.other-host.example.")
    dns_server.add("a-instead.example.test", "A", "203.0.113.7")
    dns_server.add("a-beside.example.test", "CNAME", TARGET + ".")
    dns_server.add("a-beside.example.test", "A", "203.0.113.8")
    dns_server.add("txt-only.example.test", "TXT", '"hello"')
    dns_server.blackhole("slow.example.test")
    dns_server.servfail("broken.example.test")
    dns_server.add("example.test", "A", "192.0.2.80")
    dns_server.add("example.test", "AAAA", "2001:db8::80")
    return [domain_add(project=shop, hostname=hostname, actor=alice) for hostname in EXPECTED]


FIELDS = ("state", "check_code", "check_message", "check_expected", "check_found")


def next_check_in(domain: Domain) -> timedelta:
    """How long after its check a domain is checked again; every checked domain has both."""
    assert domain.checked_at is not None and domain.next_check_at is not None
    return domain.next_check_at - domain.checked_at


def outcome(domains) -> dict[str, dict]:
    """Everything a check leaves on a domain, and its events, read back from the database.

    Times are kept relative to the check (the clock runs: a frozen one would stop the
    resolver's own timeout), so two checks a moment apart compare equal.
    """
    rows = Domain.objects.filter(pk__in=[d.pk for d in domains])
    return {
        d.hostname: {
            **{name: getattr(d, name) for name in FIELDS},
            "next_check_in": next_check_in(d),
            "verified_at_check": d.verified_at == d.checked_at if d.verified_at else None,
            "attempts": d.check_attempts,
            "cert_state": d.cert_state,
            "cert_requested": d.cert_requested_at is not None,
            "events": list(d.events.order_by("pk").values_list("action", "message")),
        }
        for d in rows
    }


def ids(domains) -> list[int]:
    return [domain.pk for domain in domains]


def test_a_mixed_batch_gives_each_domain_the_result_a_single_check_gives(mixed):
    point = transaction.savepoint()
    domain_check_many(domain_ids=ids(mixed))
    batch = outcome(mixed)
    transaction.savepoint_rollback(point)  # back to before the batch

    for domain in mixed:
        domain_check(domain_id=domain.pk)
    single = outcome(mixed)

    assert {host: row["check_code"] for host, row in batch.items()} == EXPECTED
    assert batch == single
    assert batch["ok.example.test"]["state"] == State.ISSUING
    assert batch["a-beside.example.test"]["check_found"] == f"CNAME {TARGET}; A 203.0.113.8"


def test_only_the_verified_domains_ask_for_a_certificate(mixed, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as queued:
        tasks.enqueue(domain_check_many(domain_ids=ids(mixed)).next_steps)
    issuing = Domain.objects.filter(state=State.ISSUING)
    assert sorted(issuing.values_list("hostname", flat=True)) == ["example.test", "ok.example.test"]
    assert len(commits.queued(queued)) == 1  # one enqueue after commit, for both


def test_the_domains_a_batch_verifies_are_written_with_one_update(dns_server, shop, alice):
    """Verified and their certificates requested in one statement for the batch (the
    sweep's largest cost after the DNS was an UPDATE per domain;
    docs/decisions/domain-sweep.md)."""

    hostnames = [f"shop{i}.example.test" for i in range(5)]
    for hostname in hostnames:
        dns_server.add(hostname, "CNAME", TARGET + ".")
    domains = [domain_add(project=shop, hostname=h, actor=alice) for h in hostnames]

    with CaptureQueriesContext(connection) as captured:
        domain_check_many(domain_ids=ids(domains))

    updates = [q["sql"] for q in captured if q["sql"].startswith('UPDATE "domains_domain"')]
    assert len(updates) == 2  # the batch's lease, then its results, each once for all
    assert set(Domain.objects.values_list("state", "cert_state")) == {(State.ISSUING, "requested")}


def test_running_the_batch_twice_is_harmless(mixed):
    asked = domain_check_many(domain_ids=ids(mixed)).next_steps
    first = outcome(mixed)
    asked_again = domain_check_many(domain_ids=ids(mixed)).next_steps
    second = outcome(mixed)

    assert len(asked.issue) == 2 and asked_again.issue == []  # certificates requested once
    for host, code in EXPECTED.items():
        before, after = first[host], second[host]
        assert after["check_code"] == code
        for unchanged in ("state", "cert_state", "cert_requested", "events"):
            assert after[unchanged] == before[unchanged], (host, unchanged)
        if code != "ok":  # the second failure counts, and backs off further
            assert after["attempts"] == 2
            assert after["next_check_in"] > before["next_check_in"]
    assert DomainEvent.objects.filter(action="verified").count() == 2


def test_a_domain_removed_while_its_batch_is_in_flight_is_skipped(mixed, alice, monkeypatch):
    doomed = next(d for d in mixed if d.hostname == "ok.example.test")
    real_verify_many = diagnosis.verify_many

    def verify_then_remove(domains, **kwargs):
        results = real_verify_many(domains, **kwargs)  # the DNS has answered ...
        domain_remove(domain=doomed, actor=alice)  # ... and the owner removes it
        return results

    monkeypatch.setattr(diagnosis, "verify_many", verify_then_remove)
    recorded = domain_check_many(domain_ids=ids(mixed)).domains

    assert doomed.pk not in {domain.pk for domain in recorded}
    assert len(recorded) == len(mixed) - 1
    assert not Domain.objects.filter(pk=doomed.pk).exists()
    actions = DomainEvent.objects.filter(hostname="ok.example.test").values_list(
        "action", flat=True
    )
    assert sorted(actions) == ["added", "removed"]
    assert Domain.objects.get(hostname="elsewhere.example.test").check_code == "wrong_target"


def test_a_domain_removed_before_its_batch_runs_is_skipped(mixed, alice):
    gone = mixed[1]
    domain_remove(domain=gone, actor=alice)
    recorded = domain_check_many(domain_ids=ids(mixed)).domains
    assert {d.hostname for d in recorded} == set(EXPECTED) - {gone.hostname}


def test_the_batch_task_retries_only_the_temporary_failures(mixed):
    with pytest.raises(Retry) as retry:
        tasks.check_domains.apply(args=(ids(mixed),), throw=True)
    temporary = {"slow.example.test", "broken.example.test"}
    # celery-types leaves out Retry.sig, the signature Celery retries with.
    retried = Domain.objects.filter(pk__in=retry.value.sig.args[0])  # type: ignore[attr-defined]
    assert set(retried.values_list("hostname", flat=True)) == temporary
    countdown = retry.value.when
    assert isinstance(countdown, float)
    assert 10 <= countdown <= 15  # the first step of the backoff, jittered
    # Temporary failures never fail a domain; the misconfigured ones wait for the backoff.
    assert not Domain.objects.filter(state=State.FAILED).exists()


def test_the_sweep_claims_due_domains_in_bulk_and_queues_batches(shop, clock):
    now = timezone.now()
    Domain.objects.bulk_create(
        Domain(project=shop, hostname=f"d{i}.example.test", next_check_at=now - timedelta(i))
        for i in range(scheduling.BATCH_SIZE * 2 + 1)
    )
    Domain.objects.bulk_create(
        [Domain(project=shop, hostname="later.example.test", next_check_at=now + timedelta(1))]
    )
    claimed = scheduling.sweep().checks

    due = Domain.objects.exclude(hostname="later.example.test")
    assert sorted(claimed) == sorted(due.values_list("pk", flat=True))
    assert set(due.values_list("next_check_at", flat=True)) == {now + sweep_lease()}
    assert [len(chunk) for chunk in scheduling.chunked(claimed, scheduling.BATCH_SIZE)] == [
        100,
        100,
        1,
    ]
    assert scheduling.sweep().checks == []  # claimed: a second sweep queues nothing


@pytest.mark.django_db(transaction=True)
def test_two_sweeps_at_once_never_claim_the_same_domain(shop):
    due = timezone.now() - timedelta(seconds=1)
    Domain.objects.bulk_create(
        Domain(project=shop, hostname=f"d{i}.example.test", next_check_at=due) for i in range(500)
    )
    claimed, errors = run_at_once(lambda: scheduling.sweep().checks, 2)
    app.control.purge()  # the batches both sweeps queued; no worker here to take them
    assert errors == []
    first, second = claimed
    assert not set(first) & set(second)
    assert sorted(first + second) == sorted(Domain.objects.values_list("pk", flat=True))


@pytest.mark.django_db(transaction=True)
def test_the_sweep_checks_every_due_domain_on_a_real_worker(celery_worker, dns_server, shop):
    dns_server.add("ok.example.test", "CNAME", TARGET + ".")
    dns_server.add("a-instead.example.test", "A", "203.0.113.7")
    started = timezone.now()
    due = started - timedelta(seconds=1)
    Domain.objects.bulk_create(
        Domain(project=shop, hostname=hostname, next_check_at=due)
        for hostname in ("ok.example.test", "a-instead.example.test", "missing.example.test")
    )
    tasks.sweep.delay()

    wait_for(
        lambda: Domain.objects.filter(checked_at__gte=started).count() == 3,
        timeout=60,
        what="the sweep's batch to check all three domains",
    )
    codes = dict(Domain.objects.values_list("hostname", "check_code"))
    assert codes == {
        "ok.example.test": "ok",
        "a-instead.example.test": "conflicting_record",
        "missing.example.test": "nxdomain",
    }


def test_a_claim_whose_name_goes_live_elsewhere_mid_batch_is_told_and_the_rest_recorded(
    mixed, bobs, monkeypatch
):
    """The batch is recorded in one savepoint: the unique constraint refusing one claim
    sends it to its second attempt, one savepoint per domain, and only that claim fails."""
    taken = next(d for d in mixed if d.hostname == "ok.example.test")
    real_verify_many = diagnosis.verify_many

    def verify_then_go_live_elsewhere(domains, **kwargs):
        results = real_verify_many(domains, **kwargs)  # uncontested when the DNS was asked
        now = timezone.now()
        Domain.objects.create(
            project=bobs, hostname=taken.hostname, window_started_at=now, **in_step(State.ACTIVE)
        )
        return results

    monkeypatch.setattr(diagnosis, "verify_many", verify_then_go_live_elsewhere)
    recorded = domain_check_many(domain_ids=ids(mixed))

    assert len(recorded.domains) == len(mixed)
    codes = dict(Domain.objects.filter(pk__in=ids(mixed)).values_list("hostname", "check_code"))
    assert codes == EXPECTED | {taken.hostname: "ownership_required"}
    taken.refresh_from_db()
    assert taken.state == State.PENDING
    assert Domain.objects.get(pk=mixed[-1].pk).state == State.ISSUING  # the apex verified
    assert DomainEvent.objects.filter(action="verified").count() == 1
    assert recorded.next_steps.issue == [mixed[-1].pk]


def test_a_batch_tells_a_recovery_only_to_owners_told_of_the_failure(dns_server, shop, alice):
    """Whether a recovery is news is read for the whole batch at once (one query), with
    the same answer a single check gives."""
    now = timezone.now()
    told, blip = (
        Domain.objects.create(
            project=shop,
            hostname=hostname,
            check_code="wrong_target",
            window_started_at=now,
            verified_at=now,
            **in_step(State.ACTIVE),
        )
        for hostname in ("told.example.test", "blip.example.test")
    )
    for domain in (told, blip):
        dns_server.add(domain.hostname, "CNAME", TARGET + ".")
    record_owner_event(project=shop, domain=told, type=EventType.DOMAIN_FAILING)

    domain_check_many(domain_ids=[told.pk, blip.pk])

    assert DomainEvent.objects.filter(action="verifies_again").count() == 2
    recovered = OwnerEvent.objects.filter(type=EventType.DOMAIN_RECOVERED)
    assert list(recovered.values_list("domain__hostname", flat=True)) == [told.hostname]


def test_a_cname_the_a_and_aaaa_answers_show_is_not_asked_for(mixed, dns_server):
    """A name pointing somewhere shows its CNAME in its A and AAAA answers (two questions,
    not three); a name with records of its own, or none, is still asked for its CNAME."""
    dns_server.queries.clear()
    domain_check_many(domain_ids=ids(mixed))
    asked = {(name, rdtype) for name, rdtype in dns_server.queries}
    for shown in ("ok.example.test", "elsewhere.example.test", "txt-only.example.test"):
        assert {(shown, "A"), (shown, "AAAA")} <= asked
        assert (shown, "CNAME") not in asked
    for unclear in ("a-instead.example.test", "a-beside.example.test", "missing.example.test"):
        assert (unclear, "CNAME") in asked
