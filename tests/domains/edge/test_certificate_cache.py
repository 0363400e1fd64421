"""The certificate endpoint's cache: a full handshake for a name nothing changed about reads
no row, decrypts nothing and opens no file; a change is answered once the edge version's
move is read (the thread's beat, `cache.refresh()` here), never an answer read before it.

The endpoint is called in this process, as in test_endpoint.py, and its queries counted
on this thread's connection (the served endpoint's thread reads the version on its own).
"""

from __future__ import annotations

import math
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from domains.choices import State
from domains.edge import cache as edge_cache
from domains.edge import certificates as edge_certificates
from domains.edge import version
from domains.edge.cache import CertificateCache
from domains.edge.certificates import Answer
from domains.edge.endpoint import Endpoint
from domains.edge.paths import CERTIFICATE_PATH, SECRET_FILE
from domains.models import Certificate, Domain
from domains.services import certificates
from domains.services.custom_domains import domain_add, domain_remove
from tests.fixtures.domains import go_live, in_step
from tests.petstore.database_copies import connected_to, older_copy

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "this-tests-edge-secret"
HOST = "www.example.test"


@pytest.fixture(autouse=True)
def edge_secret(settings, tmp_path) -> Path:
    settings.EDGE_DIR = tmp_path
    path = tmp_path / SECRET_FILE
    path.write_text(SECRET)
    return path


@pytest.fixture
def endpoint() -> Endpoint:
    """Its version read by its first request and then only by `cache.refresh()`."""
    return Endpoint(CertificateCache(fresh_for=math.inf), polling=False)


@pytest.fixture
def active(dns_server, www) -> Certificate:
    go_live(www, State.ISSUING)
    issued = certificates.certificate_issue(domain_id=www.pk)
    assert issued is not None
    return issued


def handshake(endpoint: Endpoint, name: str = HOST) -> tuple[str, bytes]:
    """What Caddy asks during a full handshake for `name`."""
    answer: dict[str, str] = {}

    def start_response(status, headers):
        answer["status"] = status

    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": f"{CERTIFICATE_PATH}/{SECRET}",
        "QUERY_STRING": f"server_name={name}",
        "REMOTE_ADDR": "127.0.0.1",
    }
    body = b"".join(endpoint(environ, start_response))
    return answer["status"], body


def serves(endpoint: Endpoint, certificate: Certificate) -> bool:
    status, body = handshake(endpoint)
    return status == "200 OK" and body.decode().startswith(certificate.pem.strip())


@pytest.mark.parametrize("name", [HOST, "stranger.example.test"])
def test_handshakes_for_a_name_nothing_changed_about_make_no_query(endpoint, active, name):
    with CaptureQueriesContext(connection) as first:
        expected = handshake(endpoint, name)
    # The version, then the name's rows.
    assert len(first) == 2 and version.EDGE.table in first[0]["sql"]

    for _ in range(3):
        with CaptureQueriesContext(connection) as queries:
            assert handshake(endpoint, name) == expected
        assert len(queries) == 0

    endpoint.cache.refresh()  # the thread's beat: the version, unchanged
    with CaptureQueriesContext(connection) as queries:
        assert handshake(endpoint, name) == expected
    assert len(queries) == 0


def test_other_names_are_read_once_each(endpoint, active):
    handshake(endpoint)
    with CaptureQueriesContext(connection) as queries:
        assert handshake(endpoint, "shop.example.test") == ("204 No Content", b"")
        assert handshake(endpoint, "WWW.Example.Test.")[0] == "200 OK"  # the same name
    assert len(queries) == 1


def test_a_renewal_is_served_from_the_next_beat(endpoint, active):
    assert serves(endpoint, active)
    Certificate.objects.filter(pk=active.pk).update(renew_after=timezone.now())
    renewed = certificates.certificate_renew(domain_id=active.domain_id)
    assert renewed is not None and renewed.serial != active.serial

    assert serves(endpoint, active)  # until the beat: what the thread has not read yet
    endpoint.cache.refresh()
    assert serves(endpoint, renewed)


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda domain, alice: domain_remove(domain=domain, actor=alice), id="removed"),
        pytest.param(
            lambda domain, alice: Domain.objects.filter(pk=domain.pk).update(
                **in_step(State.FAILED)
            ),
            id="stopped",
        ),
        pytest.param(
            lambda domain, alice: Certificate.objects.filter(domain=domain).delete(),
            id="certificate deleted",
        ),
    ],
)
def test_a_domain_no_longer_served_gets_nothing_from_the_next_beat(endpoint, active, alice, change):
    assert serves(endpoint, active)
    change(active.domain, alice)
    endpoint.cache.refresh()
    assert handshake(endpoint) == ("204 No Content", b"")


def test_a_name_that_goes_live_is_served_from_the_next_beat(endpoint, dns_server, www):
    assert handshake(endpoint) == ("204 No Content", b"")
    go_live(www, State.ISSUING)
    issued = certificates.certificate_issue(domain_id=www.pk)
    assert issued is not None
    endpoint.cache.refresh()
    assert serves(endpoint, issued)


def test_an_answer_read_while_the_version_moved_is_not_kept(endpoint, active, alice, monkeypatch):
    """The thread reads the version between this request's read of the rows and its
    keeping the answer: the answer, read before the change, is given once and not kept."""
    handshake(endpoint, "other.example.test")  # the version is read

    def look_up_then_removed(server_name: str) -> Answer:
        answer = edge_certificates.look_up(server_name)
        domain_remove(domain=active.domain, actor=alice)
        endpoint.cache.refresh()
        return answer

    monkeypatch.setattr(edge_cache, "look_up", look_up_then_removed)
    assert serves(endpoint, active)
    monkeypatch.setattr(edge_cache, "look_up", edge_certificates.look_up)
    assert handshake(endpoint) == ("204 No Content", b"")


def test_a_certificate_past_its_not_after_is_read_again(endpoint, active, time_machine):
    assert serves(endpoint, active)
    time_machine.move_to(active.not_after + timedelta(seconds=1))
    with CaptureQueriesContext(connection) as queries:
        assert handshake(endpoint) == ("204 No Content", b"")
    assert len(queries) == 1


def test_without_its_thread_a_stale_cache_reads_the_version_first(active):
    """The thread late or its database unreachable: each request reads the version itself,
    so nothing is served past the bound."""
    endpoint = Endpoint(CertificateCache(fresh_for=0), polling=False)
    assert serves(endpoint, active)
    with CaptureQueriesContext(connection) as queries:
        assert serves(endpoint, active)
    assert len(queries) == 1 and version.EDGE.table in queries[0]["sql"]
    Domain.objects.filter(pk=active.domain_id).update(**in_step(State.FAILED))
    assert handshake(endpoint) == ("204 No Content", b"")


def test_names_without_a_certificate_are_kept_up_to_a_limit(endpoint, active, monkeypatch):
    """Anyone may send any SNI: what is kept of unknown names is bounded."""
    monkeypatch.setattr(edge_cache, "UNKNOWN_NAMES", 2)
    assert serves(endpoint, active)
    for name in ("a.example.test", "b.example.test", "c.example.test"):
        handshake(endpoint, name)
    with CaptureQueriesContext(connection) as queries:
        handshake(endpoint, "c.example.test")
        handshake(endpoint, "b.example.test")
        handshake(endpoint, "a.example.test")  # the least recently asked: dropped
        assert serves(endpoint, active)  # names with a certificate are not counted
    assert len(queries) == 1


def test_names_with_a_certificate_are_kept_up_to_their_setting(endpoint, active, shop, alice,
                                                                settings):  # fmt: skip
    """A process's memory does not grow with the live domains: EDGE_CACHED_CERTIFICATES of
    them, the least recently asked dropped first."""
    settings.EDGE_CACHED_CERTIFICATES = 1
    other = go_live(domain_add(project=shop, hostname="shop.example.test", actor=alice),
                    State.ISSUING)  # fmt: skip
    issued = certificates.certificate_issue(domain_id=other.pk)
    assert issued is not None
    assert serves(endpoint, active)
    with CaptureQueriesContext(connection) as queries:
        status, body = handshake(endpoint, other.hostname)  # drops the first
        assert status == "200 OK" and body.decode().startswith(issued.pem.strip())
        assert handshake(endpoint, other.hostname) == (status, body)
        assert serves(endpoint, active)  # read again
    assert len(queries) == 2


def test_the_secret_file_is_read_on_the_beat_not_per_request(endpoint, active, edge_secret):
    assert serves(endpoint, active)
    edge_secret.unlink()
    assert serves(endpoint, active)  # the secret as last read
    endpoint.cache.refresh()
    assert handshake(endpoint) == ("403 Forbidden", b"")


def test_a_database_restored_from_an_older_state_drops_every_answer(endpoint, dns_server, www):
    """The endpoint's database becomes an older copy of itself (a backup restored, a replica
    promoted that lacked the last commits), where writes bring the version back to the
    number the cache holds, for other rows: the next beat's stamp differs all the same (the
    database's incarnation), so the cache drops what it kept."""
    with older_copy() as copy:  # www not live yet
        go_live(www, State.ISSUING)
        issued = certificates.certificate_issue(domain_id=www.pk)
        assert issued is not None
        assert serves(endpoint, issued)
        held = version.current()

        with connected_to(copy):
            while version.current() < held:
                Domain.objects.filter(pk=www.pk).update(hostname=f"v{version.current()}.test")
            assert version.current() == held  # the number the cache holds
            endpoint.cache.refresh()
            assert handshake(endpoint) == ("204 No Content", b"")
