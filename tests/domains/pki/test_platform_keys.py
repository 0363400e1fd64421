"""No key on a disk: the ACME account's key and the local CA's are rows (PlatformKey), so
certificates workers on any hosts, each with an empty DOMAINS_CA_DIR of its own, are one
ACME account and resume each other's orders, and the folder holds nothing that must
survive."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import Encoding

from domains import pki
from domains.choices import PlatformKeyUse, State
from domains.models import AcmeOrder, Certificate, Domain, PlatformKey
from domains.pki import acmeclient, sealing
from domains.pki.local import new_ca
from tests.processes import ROOT, service_env

# The real issuing code, in a process of its own: place and answer the domain's order (a
# worker that died before finalizing it), or issue the certificate as the task does.
STEP = """
import sys
import django
django.setup()
from domains import pki
from domains.models import Domain
from domains.services import certificates
step, domain_id = sys.argv[1], int(sys.argv[2])
if step == "order":
    pki.authority().prepare(Domain.objects.get(pk=domain_id))
else:
    print(certificates.certificate_issue(domain_id=domain_id).serial)
"""


def run_step(settings, ca_dir: Path, step: str, domain_id: int) -> str:
    env = service_env(settings, DOMAINS_CA_DIR=str(ca_dir))
    done = subprocess.run(
        [sys.executable, "-c", STEP, step, str(domain_id)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def holds_nothing(folder: Path) -> bool:
    return not folder.exists() or not any(folder.iterdir())


@pytest.mark.acme
def test_two_certificates_workers_with_empty_folders_of_their_own_are_one_acme_account(
    settings, verified, pebble, tmp_path
):
    host_a, host_b = tmp_path / "host-a-ca", tmp_path / "host-b-ca"

    run_step(settings, host_a, "order", verified.pk)
    order = AcmeOrder.objects.get(domain=verified)
    # The other host resumes that order: only its own account may read and finalize it.
    serial = run_step(settings, host_b, "issue", verified.pk)

    assert Domain.objects.get(pk=verified.pk).state == State.ACTIVE
    assert Certificate.objects.get(domain=verified).serial == serial
    assert pebble.issued() == [serial]
    assert len(pebble.orders()) == 1  # the order placed on host A, finalized on host B
    assert order.url.rsplit("/", 1)[1] in pebble.orders()
    # Pebble registered one account; the second host's registration found it.
    registered = re.findall(r"There are now (\d+) accounts in memory", pebble.log())
    assert registered == ["1"]
    assert PlatformKey.objects.filter(use=PlatformKeyUse.ACME_ACCOUNT).count() == 1
    assert holds_nothing(host_a) and holds_nothing(host_b)


@pytest.mark.django_db
def test_the_platforms_keys_are_created_once_and_the_folder_is_never_read(settings, tmp_path):
    """Key files left in the folder are not the platform's keys; emptied, or on another host,
    the folder changes nothing: the same keys sign."""
    folder = tmp_path / "ca"
    folder.mkdir()
    ca_key, ca_cert = new_ca()
    (folder / "ca-key.pem").write_text(ca_key)
    (folder / "ca-cert.pem").write_text(ca_cert)
    (folder / "acme-account-key").write_text(sealing.pem(sealing.new_key()))
    settings.DOMAINS_CA_DIR = folder

    signer, certificate = pki.load_or_create_ca()
    opened = acmeclient.account_key()

    assert certificate.public_bytes(Encoding.PEM).decode() != ca_cert
    stored = PlatformKey.objects.get(use=PlatformKeyUse.LOCAL_CA)
    assert stored.certificate_pem == certificate.public_bytes(Encoding.PEM).decode()
    assert sealing.is_sealed(PlatformKey.objects.get(use=PlatformKeyUse.ACME_ACCOUNT).key_pem)
    for path in folder.iterdir():
        path.unlink()
    settings.DOMAINS_CA_DIR = tmp_path / "elsewhere"
    assert pki.load_or_create_ca()[1].serial_number == certificate.serial_number
    assert acmeclient.account_key().public_key() == opened.public_key()
    assert signer.public_key() == pki.load_or_create_ca()[0].public_key()
    assert PlatformKey.objects.count() == 2
    # The CA's certificate is copied out for clients to trust, from the row.
    assert pki.root_certificate_path().read_text() == stored.certificate_pem
