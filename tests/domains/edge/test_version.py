"""The edge version moves with every write that can change a handshake's answer, whoever
makes it (a service, a bulk update, raw SQL, a cascade), and with no other: the certificate
endpoint keeps its answers while it stands still (test_endpoint.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.utils import timezone

from domains.choices import Action, State
from domains.edge import processes, version
from domains.models import Certificate, Domain, DomainEvent, Project
from domains.pki import sealing
from domains.services import certificates
from domains.services.custom_domains import domain_add, domain_remove
from tests.fixtures.domains import go_live, in_step

# Committed writes: the version moves when the writing transaction commits.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def active(dns_server, www) -> Domain:
    go_live(www, State.ISSUING)
    assert certificates.certificate_issue(domain_id=www.pk) is not None
    www.refresh_from_db()
    return www


def another_certificate(domain: Domain, serial: str) -> Certificate:
    now = timezone.now()
    return Certificate.objects.create(
        domain=domain, serial=serial, not_before=now, not_after=now + timedelta(days=90),
        san=domain.hostname, pem="chain", key_pem=sealing.seal("key"),
    )  # fmt: skip


def moves(change: Callable[[], object]) -> bool:
    before = version.current()
    change()
    return version.current() > before


def test_the_migration_made_every_trigger():
    assert version.missing_triggers() == []


def test_issuing_a_certificate_moves_it(dns_server, www):
    go_live(www, State.ISSUING)  # a state change: moves it too
    assert moves(lambda: certificates.certificate_issue(domain_id=www.pk))


def test_renewing_a_certificate_moves_it(active):
    Certificate.objects.filter(domain=active).update(renew_after=timezone.now())
    assert moves(lambda: certificates.certificate_renew(domain_id=active.pk))


def test_any_write_to_a_certificate_row_moves_it(active):
    certificate = Certificate.objects.get(domain=active)
    assert moves(lambda: another_certificate(active, "c0ffee"))
    assert moves(lambda: Certificate.objects.filter(pk=certificate.pk).update(pem="other"))
    assert moves(lambda: Certificate.objects.filter(pk=certificate.pk).delete())


def test_raw_sql_moves_it(active):
    def raw_update() -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {Certificate._meta.db_table} SET key_pem = key_pem WHERE domain_id = %s",
                [active.pk],
            )

    assert moves(raw_update)


@pytest.mark.parametrize("state", [State.FAILED, State.LOST, State.VERIFIED])
def test_a_state_change_moves_it(active, state):
    assert moves(lambda: Domain.objects.filter(pk=active.pk).update(**in_step(state)))


def test_a_bulk_state_change_moves_it(active, bobs, bob):
    rival = domain_add(project=bobs, hostname="shop.example.test", actor=bob)
    both = Domain.objects.filter(pk__in=[active.pk, rival.pk])
    assert moves(lambda: both.update(**in_step(State.FAILED)))


def test_a_renamed_domain_moves_it(active):
    assert moves(lambda: Domain.objects.filter(pk=active.pk).update(hostname="w2.example.test"))


def test_adding_and_removing_a_domain_moves_it(active, shop, alice):
    assert moves(lambda: domain_add(project=shop, hostname="new.example.test", actor=alice))
    assert moves(lambda: domain_remove(domain=active, actor=alice))


def test_deleting_the_project_moves_it(active):
    assert moves(lambda: Project.objects.filter(pk=active.project_id).delete())


def test_a_check_that_changes_nothing_served_leaves_it(active):
    """Checks write a domain's row every few minutes; only its state and name count."""
    assert not moves(lambda: Domain.objects.filter(pk=active.pk).update(
        checked_at=timezone.now(), check_message="ok", next_check_at=timezone.now()
    ))  # fmt: skip
    assert not moves(lambda: Domain.objects.filter(pk=active.pk).update(state=State.ACTIVE))


def test_it_moves_once_the_change_is_committed_and_not_for_a_rollback(active):
    before = version.current()
    with pytest.raises(RuntimeError), transaction.atomic():
        Domain.objects.filter(pk=active.pk).update(**in_step(State.FAILED))
        raise RuntimeError("rolled back")
    assert version.current() == before
    with transaction.atomic():
        Domain.objects.filter(pk=active.pk).update(**in_step(State.FAILED))
    assert version.current() > before


class RolledBack(Exception):
    pass


def test_a_dropped_trigger_is_missing_and_the_edge_refuses_to_start(monkeypatch):
    """A trigger dropped (by hand, or by a migration that remakes its table) would leave the
    version still while rows change."""
    monkeypatch.setattr(processes, "run", lambda *args, **kwargs: pytest.fail("the edge started"))
    dropped, table = version.EDGE.triggers()[0]  # on the certificates
    with pytest.raises(RolledBack), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TRIGGER {dropped} ON {table}")
        assert version.missing_triggers() == [dropped]
        with pytest.raises(
            CommandError, match=f"lacks the edge version's triggers \\({dropped}\\)"
        ):
            call_command("edge")
        raise RolledBack
    assert version.missing_triggers() == []


def test_a_disabled_trigger_is_missing_and_the_edge_refuses_to_start(monkeypatch):
    """Disabled, a trigger moves nothing either."""
    monkeypatch.setattr(processes, "run", lambda *args, **kwargs: pytest.fail("the edge started"))
    disabled, table = version.EDGE.triggers()[2]  # a domain's state or name
    with pytest.raises(RolledBack), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER {disabled}")
        assert version.missing_triggers() == [disabled]
        with pytest.raises(CommandError, match=f"\\({disabled}\\)"):
            call_command("edge")
        raise RolledBack
    assert version.missing_triggers() == []


def test_a_worker_commits_while_an_owner_holds_the_project(www, shop, alice):
    """A worker's transaction renames or moves a domain (the version is raised at its commit)
    and then records an event of the project (whose foreign key PostgreSQL checks at commit,
    after the raise). An owner's Add holds the project's row meanwhile. That lock must let
    the check through (FOR NO KEY UPDATE, not FOR UPDATE): otherwise the worker waits for
    the owner while holding the version, the owner's commit waits for the version, and
    PostgreSQL breaks the deadlock by failing one of them."""
    holding, release = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def in_thread(work: Callable[[], None]) -> threading.Thread:
        def run() -> None:
            try:
                work()
            except BaseException as exc:  # noqa: BLE001 - reported by the test below
                failures.append(exc)
            finally:
                connection.close()

        thread = threading.Thread(target=run)
        thread.start()
        return thread

    def owner_adds() -> None:
        with transaction.atomic():
            domain_add(project=shop, hostname="shop.example.test", actor=alice)
            holding.set()
            release.wait(10)

    def worker_commits() -> None:
        with transaction.atomic():
            Domain.objects.filter(pk=www.pk).update(hostname="www2.example.test")
            DomainEvent.objects.create(project=shop, domain=www, action=Action.ADDED)

    owner = in_thread(owner_adds)
    assert holding.wait(10)
    worker = in_thread(worker_commits)
    worker.join(5)
    worker_done = not worker.is_alive()
    release.set()
    owner.join(10)
    worker.join(10)
    assert worker_done, "the worker waited at commit for the owner's lock on the project"
    assert failures == []
