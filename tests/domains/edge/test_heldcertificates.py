"""Caddy holding the live certificates itself (domains/edge/heldcertificates.py), over real
TLS: the edge as production starts it, its admin API asked what Caddy holds."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import tempfile
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from devtools.processes import spawn, stop_group
from devtools.sockets import free_port
from domains.choices import State
from domains.edge import admin, processes, version
from domains.edge.cache import FRESH_FOR
from domains.edge.caddy import config
from domains.edge.heldcertificates import ADD_AFTER_QUIET, LOAD_PEM, Holder, loadable
from domains.edge.processes import caddy_command, caddy_env
from domains.models import Certificate, Domain
from domains.pki import sealing
from domains.services import certificates
from domains.services.custom_domains import domain_add, domain_remove
from tests.fixtures.domains import go_live
from tests.fixtures.edge import Edge, serial
from tests.petstore.locks import locked_elsewhere
from tests.processes import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

# The edges of the other modules hold nothing (the default): the endpoint's path.
HELD = 1000


@pytest.fixture(scope="module")
def edge_environment() -> dict[str, str]:
    return {"EDGE_HELD_CERTIFICATES": str(HELD)}


def served(domain: Domain) -> Certificate:
    certificate = Certificate.objects.filter(domain=domain).order_by("-not_after").first()
    assert certificate is not None
    return certificate


def endpoint_pids(edge: Edge) -> list[int]:
    """The certificate endpoint's processes (granian's main process and its workers)."""
    port = edge.certificates.rsplit(":", 1)[1]
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            words = cmdline.read_bytes().split(b"\0")
            if b"domains.edge.endpoint:application" in words and port.encode() in words:
                pids.append(int(cmdline.parent.name))
    assert pids, "the endpoint's processes are not found"
    return pids


@contextlib.contextmanager
def endpoint_stopped(edge: Edge) -> Iterator[None]:
    pids = endpoint_pids(edge)
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


def test_caddy_holds_a_live_certificate_and_serves_it_with_the_endpoint_stopped(edge, www_on_edge):
    certificate = served(www_on_edge)
    edge.holds([certificate.serial])

    with endpoint_stopped(edge):
        # Nobody is asked: a handshake the endpoint would have to answer would hang here.
        assert serial(edge.handshake(www_on_edge.hostname)) == certificate.serial


def test_a_removed_domains_held_certificate_is_gone_within_the_bound(edge, www_on_edge, alice):
    edge.holds([served(www_on_edge).serial])

    domain_remove(domain=www_on_edge, actor=alice)

    edge.shows(www_on_edge.hostname, None)
    assert edge.held() == []


def test_a_stopped_domains_held_certificate_is_gone_within_the_bound(edge, www_on_edge):
    edge.holds([served(www_on_edge).serial])

    go_live(www_on_edge, State.FAILED)

    edge.shows(www_on_edge.hostname, None)
    assert edge.held() == []


def test_a_renewed_held_certificate_replaces_the_old_one_at_once(edge, www_on_edge):
    first = served(www_on_edge)
    edge.holds([first.serial])
    Certificate.objects.filter(pk=first.pk).update(renew_after=timezone.now())

    renewed = certificates.certificate_renew(domain_id=www_on_edge.pk)

    assert renewed is not None and renewed.serial != first.serial
    edge.shows(www_on_edge.hostname, renewed.serial)
    assert edge.held() == [renewed.serial]


def test_a_row_whose_certificate_names_another_host_is_not_held(edge, www_on_edge, shop, alice):
    """Caddy serves a loaded certificate for every name in it: a row of one domain holding
    another's certificate (staff's copy, a restore gone wrong) must never make Caddy serve
    it for that other name. Every other certificate is held as before."""
    www = served(www_on_edge)
    api = go_live(domain_add(project=shop, hostname="api.example.test", actor=alice))
    Certificate.objects.create(
        domain=api, serial="a1", not_before=www.not_before, not_after=www.not_after,
        san=api.hostname, pem=www.pem, key_pem=www.key_pem, renew_after=www.renew_after,
    )  # fmt: skip

    edge.wait_for_log(
        "Caddy does not hold the certificate of api.example.test: it names www.example.test, "
        "not api.example.test alone; the endpoint serves it"
    )
    edge.holds([www.serial])


def test_an_expired_held_certificate_is_let_go(edge, www_on_edge):
    """A held certificate is let go when its notAfter comes, by the clock alone: nothing
    moves the edge version then."""
    certificate = served(www_on_edge)
    edge.holds([certificate.serial])
    expires = timezone.now() + timedelta(seconds=2)
    Certificate.objects.filter(pk=certificate.pk).update(not_after=expires)
    edge.holds([certificate.serial])  # held again with its new notAfter

    edge.holds([], within=2 + FRESH_FOR)
    assert timezone.now() >= expires


def test_a_database_that_stops_answering_leaves_caddy_holding_nothing(edge, www_on_edge):
    certificate = served(www_on_edge)
    edge.holds([certificate.serial])

    # The holder's read of the version waits on the lock, as on a database that hangs.
    with locked_elsewhere(version.EDGE.table):
        edge.holds([], within=FRESH_FOR + 1)
        edge.wait_for_log("Caddy holds no certificate")

    edge.holds([certificate.serial])


def test_the_held_keys_are_never_written_to_a_disk(edge, www_on_edge):
    certificate = served(www_on_edge)
    edge.holds([certificate.serial])
    key = sealing.unseal(certificate.key_pem).split("-----")[2].strip().splitlines()[0]

    assert stat.S_IMODE(edge.admin_socket.stat().st_mode) == 0o600
    written = [path for path in edge.edge_dir.rglob("*") if path.is_file()]
    assert written and not [path for path in written if key.encode() in path.read_bytes()]


def test_the_edge_refuses_an_admin_api_on_tcp_in_one_line(settings):
    settings.EDGE_ADMIN = "localhost:2019"
    with pytest.raises(CommandError, match=r"^edge: EDGE_ADMIN is 'localhost:2019': .* unix"):
        call_command("edge", "--print")


def certificate_and_key(*names: str, common_name: str = "") -> tuple[str, str]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = timezone.now()
    subject = x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, common_name)] if common_name else []
    )
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test CA")]))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(hours=1))
        .not_valid_after(now + timedelta(days=1))
    )
    if names:
        dns_names = [x509.DNSName(name) for name in names]
        builder = builder.add_extension(x509.SubjectAlternativeName(dns_names), critical=False)
    pem = builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode()
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return pem, key_pem


def test_only_a_certificate_naming_its_domain_alone_with_its_own_key_is_loadable():
    pem, key_pem = certificate_and_key("www.example.test")
    _, other_key = certificate_and_key("www.example.test")
    assert loadable("www.example.test", pem, key_pem) is None

    wider, wider_key = certificate_and_key("www.example.test", "shop.other.test")
    assert loadable("www.example.test", wider, wider_key) == (
        "it names www.example.test, shop.other.test, not www.example.test alone"
    )
    # Caddy serves a certificate for its subject's common name too.
    named, named_key = certificate_and_key("www.example.test", common_name="shop.other.test")
    assert loadable("www.example.test", named, named_key) == (
        "it names shop.other.test, www.example.test, not www.example.test alone"
    )
    same, same_key = certificate_and_key("www.example.test", common_name="WWW.example.test")
    assert loadable("www.example.test", same, same_key) is None
    nameless, nameless_key = certificate_and_key()
    assert loadable("www.example.test", nameless, nameless_key) == (
        "it names nothing, not www.example.test alone"
    )
    assert loadable("www.example.test", pem, other_key) == "its key is not the certificate's"
    assert (loadable("www.example.test", "junk", key_pem) or "").startswith("it does not parse")


def test_the_edge_stops_when_the_thread_beside_its_processes_ends():
    started = time.monotonic()
    code = processes.run([(["sleep", "30"], dict(os.environ))], beside=lambda: None)
    assert code == 1 and time.monotonic() - started < processes.STOP_TIMEOUT


@pytest.fixture
def lone_caddy(settings, tmp_path) -> Iterator[Path]:
    """Caddy alone in the edge's configuration, its admin socket in `settings`; yields its
    process's log path once its admin API answers."""
    admin_dir = Path(tempfile.mkdtemp(prefix="held-"))  # a unix socket's path is short
    settings.EDGE_ADMIN = f"unix/{admin_dir / 'admin.sock'}"
    settings.HTTPS_PORT, settings.EDGE_HTTP = free_port(), False
    document = tmp_path / "caddy.json"
    document.write_text(json.dumps(config(data_dir=tmp_path / "data", secret="unused")))
    log_path = tmp_path / "caddy.log"
    process = spawn(caddy_command(document), env=caddy_env(tmp_path), log_path=log_path)
    try:
        wait_for(lambda: (admin_dir / "admin.sock").exists(), timeout=30, what="Caddy's admin")
        yield log_path
    finally:
        stop_group(process)
        shutil.rmtree(admin_dir, ignore_errors=True)


def test_a_caddy_that_cannot_be_told_ends_the_holder(lone_caddy, active, alice, settings):
    """What Caddy holds is unknown once a load cannot be sent: the holder raises, which ends
    the edge (processes.run, above), and its restart holds nothing."""
    holder = Holder(limit=10)
    holder.beat()
    time.sleep(ADD_AFTER_QUIET)
    holder.beat()  # the live set has been still for a second: loaded
    assert [entry["certificate"] for entry in admin.call("GET", LOAD_PEM)] == [served(active).pem]

    Path(settings.EDGE_ADMIN.removeprefix("unix/")).unlink()  # Caddy no longer reachable
    domain_remove(domain=active, actor=alice)

    with pytest.raises(admin.Unreachable):
        holder.beat()
