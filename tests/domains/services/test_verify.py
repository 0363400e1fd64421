"""Verification against a real DNS server on loopback: one case per thing an owner can get wrong."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from domains import tasks
from domains.choices import CertState, State
from domains.models import Domain
from domains.selectors import domain_troubleshoot
from domains.services import certificates
from domains.services.custom_domains import domain_add, domain_remove
from domains.services.verification import domain_check, domain_check_many
from petstore.models import TaskFailure
from tests.fixtures.domains import TARGET, TARGET_ADDRESS, TARGET_ADDRESS6, check
from tests.processes import wait_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def apex(shop, alice):
    return domain_add(project=shop, hostname="example.test", actor=alice)


def test_correct_cname_verifies(dns_server, www):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain = check(www)
    assert domain.check_code == "ok"
    assert domain.state == State.ISSUING  # verified, and the certificate is requested
    assert domain.verified_at is not None
    assert domain.check_expected == f"CNAME {TARGET}"
    assert domain.check_found == f"CNAME {TARGET}"


def test_cname_comparison_ignores_case_and_trailing_dot(dns_server, www):
    dns_server.add("www.example.test", "CNAME", "DOMAINS.Petstore.LOCALHOST.")
    assert check(www).check_code == "ok"


def test_cname_pointing_elsewhere_says_where(dns_server, www):
    dns_server.add("www.example.test", "CNAME", "shops.other-host.example.")
    domain = check(www)
    assert domain.check_code == "wrong_target"
    assert domain.state == State.PENDING
    assert domain.check_found == "CNAME shops.other-host.example"
    assert "shops.other-host.example" in domain.check_message
    assert TARGET in domain.check_message


def test_conflicting_a_record_fails_verification(dns_server, www):
    dns_server.add("www.example.test", "A", "203.0.113.7")
    domain = check(www)
    assert domain.check_code == "conflicting_record"
    assert domain.check_found == "A 203.0.113.7"
    assert "A 203.0.113.7" in domain.check_message
    assert domain.state == State.PENDING


def test_a_record_beside_the_right_cname_is_named(dns_server, www):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    dns_server.add("www.example.test", "AAAA", "2001:db8::dead")
    domain = check(www)
    assert domain.check_code == "conflicting_record"
    assert "AAAA 2001:db8::dead" in domain.check_message
    assert domain.check_found == f"CNAME {TARGET}; AAAA 2001:db8::dead"


def test_name_without_any_record_is_nxdomain(dns_server, www):
    dns_server.add("example.test", "TXT", '"zone exists"')
    domain = check(www)
    assert domain.check_code == "nxdomain"
    assert "does not exist" in domain.check_message
    assert domain.check_found == ""


def test_name_with_other_records_but_no_cname_is_no_record(dns_server, www):
    dns_server.add("www.example.test", "TXT", '"hello"')
    domain = check(www)
    assert domain.check_code == "no_record"
    assert "no CNAME record yet" in domain.check_message


def test_record_that_appears_after_two_checks_verifies_on_the_third(dns_server, www):
    assert check(www).check_code == "nxdomain"
    assert check(www).check_code == "nxdomain"
    www.refresh_from_db()
    assert www.check_attempts == 2
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    domain = check(www)
    assert domain.check_code == "ok"
    assert domain.check_attempts == 0


def test_server_that_never_answers_is_a_temporary_timeout(dns_server, www):
    dns_server.blackhole("www.example.test")
    domain = check(www)
    assert domain.check_code == "dns_timeout"
    assert "temporary" in domain.check_message
    assert "not your configuration" in domain.check_message
    assert domain.state == State.PENDING


def test_servfail_is_temporary_and_kept_apart_from_timeout(dns_server, www):
    dns_server.servfail("www.example.test")
    domain = check(www)
    assert domain.check_code == "dns_servfail"
    assert domain.state == State.PENDING


def test_apex_verifies_when_its_addresses_are_the_targets(dns_server, apex):
    dns_server.add("example.test", "A", TARGET_ADDRESS)
    dns_server.add("example.test", "AAAA", TARGET_ADDRESS6)
    domain = check(apex)
    assert domain.check_code == "ok"
    assert TARGET_ADDRESS in domain.check_expected


def test_apex_pointing_elsewhere_does_not_verify(dns_server, apex):
    dns_server.add("example.test", "A", "198.51.100.9")
    domain = check(apex)
    assert domain.check_code == "wrong_target"
    assert domain.check_found == "A 198.51.100.9"
    assert "ALIAS or ANAME" in domain.check_message


def test_apex_with_an_extra_address_names_the_conflict(dns_server, apex):
    dns_server.add("example.test", "A", TARGET_ADDRESS, "198.51.100.9")
    dns_server.add("example.test", "AAAA", TARGET_ADDRESS6)
    domain = check(apex)
    assert domain.check_code == "conflicting_record"
    assert "198.51.100.9" in domain.check_message


def test_apex_without_addresses_is_no_record(dns_server, apex):
    assert check(apex).check_code == "nxdomain"  # nothing at all is known of example.test
    dns_server.add("example.test", "MX", "10 mail.example.test.")
    assert check(apex).check_code == "no_record"


def test_idna_name_is_checked_in_its_ascii_form(dns_server, shop, alice):
    domain = domain_add(project=shop, hostname="Bücher.example.test", actor=alice)
    assert domain.hostname == "xn--bcher-kva.example.test"
    assert domain.hostname_unicode == "bücher.example.test"
    dns_server.add("xn--bcher-kva.example.test", "CNAME", TARGET + ".")
    assert check(domain).check_code == "ok"


def test_check_of_a_removed_domain_does_nothing(dns_server, www, alice):
    pk = www.pk
    domain_remove(domain=www, actor=alice)
    assert domain_check(domain_id=pk).domain is None


def test_troubleshoot_reports_both_checks_from_what_they_stored(dns_server, www):
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    dns_server.add("example.test", "CAA", '0 issue "letsencrypt.org"')
    domain_check(domain_id=www.pk)
    certificates.certificate_issue(domain_id=www.pk)  # meets the CAA record
    www.refresh_from_db()
    dns_server.clear()  # what the DNS says now is not asked: a report reads stored results
    report = domain_troubleshoot(domain=www)
    assert report["verifies"] is True
    assert report["caa_blocks"] is True
    assert "letsencrypt.org" in report["caa_message"]


# --- every domain is checked on its own ---------------------------------------------------

# A 240-character name under a registrable domain another project proved: made before Add
# refused such names, so its verification record (_petstore-verification.<name>, 263
# characters) is not a DNS name at all.
POISON = "b" * 45 + "." + ".".join(["a" * 60] * 3) + ".victim.test"
assert len(POISON) == 240


@pytest.fixture
def patient_dns(settings):
    """A batch asks a hundred questions at once; on a busy machine the loopback server may
    need longer than the suite's short lifetime, and a timeout would be retried, not
    recorded. These tests are about isolation, not speed."""
    settings.DOMAINS_DNS_TIMEOUT, settings.DOMAINS_DNS_LIFETIME = 2.0, 5.0


def _batch_of_100(shop, bobs, bob, dns_server) -> tuple[list[int], Domain, Domain]:
    """98 live domains of two tenants, bob's live www.victim.test (which proved
    victim.test), and alice's poisoned claim: the ids of a sweep batch, due now."""
    dns_server.add("www.victim.test", "CNAME", TARGET + ".")
    victim = domain_add(project=bobs, hostname="www.victim.test", actor=bob)
    assert check(victim).is_live
    now = timezone.now()
    live = []
    for i in range(98):
        host = f"site{i}.example.test"
        dns_server.add(host, "CNAME", TARGET + ".")
        live.append(
            Domain(
                project=shop if i % 2 else bobs,
                hostname=host,
                state=State.ACTIVE,
                cert_state=CertState.ISSUED,
                check_code="ok",
                verified_at=now,
                window_started_at=now,
            )
        )
    Domain.objects.bulk_create(live)
    poisoned = Domain.objects.create(project=shop, hostname=POISON, window_started_at=now)
    batch = Domain.objects.filter(Q(hostname__endswith=".example.test") | Q(pk=victim.pk))
    ids = [*batch.values_list("pk", flat=True), poisoned.pk]
    Domain.objects.filter(pk__in=ids).update(
        checked_at=None, next_check_at=now - timedelta(minutes=1)
    )
    assert len(ids) == 100
    return ids, victim, poisoned


def _the_other_99_were_checked(ids: list[int], poisoned: Domain, since) -> None:
    others = Domain.objects.filter(pk__in=ids).exclude(pk=poisoned.pk)
    assert others.count() == 99
    assert not others.filter(Q(checked_at__isnull=True) | Q(checked_at__lt=since)).exists()
    assert set(others.values_list("check_code", flat=True)) == {"ok"}
    assert all(domain.is_live for domain in others)
    assert not others.filter(next_check_at__lt=since + timedelta(hours=1)).exists()


@pytest.mark.usefixtures("patient_dns")
def test_one_unaskable_name_does_not_stop_the_batch(dns_server, shop, bobs, bob):
    ids, victim, poisoned = _batch_of_100(shop, bobs, bob, dns_server)
    started = timezone.now()

    recorded = domain_check_many(domain_ids=ids)

    assert len(recorded.domains) == 100
    _the_other_99_were_checked(ids, poisoned, started)
    poisoned.refresh_from_db()
    # Its own result: permanent (it fails at the end of its window), and says what to do.
    assert poisoned.check_code == "unaskable"
    assert poisoned.state == State.PENDING
    assert "Remove this domain and add a name of at most 230 characters" in (poisoned.check_message)


@pytest.mark.usefixtures("patient_dns")
def test_the_sweeps_batch_task_records_the_other_99(dns_server, shop, bobs, bob):
    ids, victim, poisoned = _batch_of_100(shop, bobs, bob, dns_server)
    started = timezone.now()

    tasks.check_domains(ids)  # what the worker runs for a sweep's batch (no retry asked)

    _the_other_99_were_checked(ids, poisoned, started)


@pytest.mark.usefixtures("patient_dns")
def test_a_domain_whose_recording_raises_is_left_out_alone(dns_server, shop, bobs, bob):
    ids, victim, poisoned = _batch_of_100(shop, bobs, bob, dns_server)
    sacrificed = Domain.objects.get(hostname="site7.example.test")
    with connection.cursor() as cursor:  # the database itself refuses this one row's update
        cursor.execute(
            "CREATE FUNCTION refuse_one() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"IF NEW.id = {sacrificed.pk} THEN RAISE EXCEPTION 'row refused'; END IF; "
            "RETURN NEW; END $$"
        )
        cursor.execute(
            f"CREATE TRIGGER refuse_one BEFORE UPDATE ON {Domain._meta.db_table} "
            "FOR EACH ROW EXECUTE FUNCTION refuse_one()"
        )
    started = timezone.now()

    recorded = domain_check_many(domain_ids=ids)

    assert sacrificed.pk not in {domain.pk for domain in recorded.domains}
    assert len(recorded.domains) == 99
    recorded_ids = [pk for pk in ids if pk != sacrificed.pk]
    others = Domain.objects.filter(pk__in=recorded_ids).exclude(pk=poisoned.pk)
    assert not others.filter(Q(checked_at__isnull=True) | Q(checked_at__lt=started)).exists()
    assert Domain.objects.get(pk=sacrificed.pk).checked_at is None
    failure = TaskFailure.objects.get(
        task_name="domains.services.verification.domain_check_many", kind="failed"
    )
    assert failure.count == 1
    assert f"domain {sacrificed.pk}, recording" in failure.last_error
    assert "row refused" in failure.last_error


def test_a_real_workers_sweep_records_the_other_99(
    patient_dns, celery_worker, dns_server, shop, bobs, bob
):
    # patient_dns first: the worker takes the DNS lifetime from the settings it starts with.
    ids, victim, poisoned = _batch_of_100(shop, bobs, bob, dns_server)
    started = timezone.now()

    tasks.sweep()  # what beat runs: claims the 100 due checks and queues their batch

    def checked() -> bool:
        rows = Domain.objects.filter(pk__in=ids, checked_at__gte=started)
        return rows.count() == 100

    wait_for(checked, timeout=60, what="the worker to check the batch")
    _the_other_99_were_checked(ids, poisoned, started)
    assert Domain.objects.get(pk=poisoned.pk).check_code == "unaskable"
