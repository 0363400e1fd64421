"""Private keys at rest: sealed under DOMAINS_KEY_ENCRYPTION_KEY, which only the worker and
the edge hold (the web process starts and serves without it); a key that is missing,
malformed or not the one that sealed the stored keys stops them in one line; rotation
through DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS and `resealkeys`; the local CA behind the same
interface; the issuer and renewal date a page shows."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Mapping
from io import StringIO

import pytest
import requests
from cryptography.fernet import Fernet
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone

from domains import pki
from domains.models import Certificate, PlatformKey
from domains.pki import acmeclient, sealing
from domains.services import certificates
from tests.fixtures.domains import CA_ID, go_live
from tests.processes import ROOT, service_env, web_server_process

RECIPE = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
KEY_A, KEY_B = secrets.token_urlsafe(32), secrets.token_urlsafe(32)


def run(
    command: list[str], env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def without_key(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if not k.startswith("DOMAINS_KEY_ENCRYPTION_KEY")}


def manage(*args: str) -> list[str]:
    return [sys.executable, "manage.py", *args]


def worker() -> list[str]:
    return [sys.executable, "-m", "celery", "-A", "petstore", "worker", "--pool", "solo",
            "--without-gossip", "--without-mingle", "--without-heartbeat"]  # fmt: skip


def one_line_naming_the_key(result: subprocess.CompletedProcess) -> str:
    """The refusal: a non-zero exit and one line (no traceback) that names the variable."""
    assert result.returncode != 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if "DOMAINS_KEY_ENCRYPTION_KEY" in line]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_a_sealed_key_opens_only_with_its_own_encryption_key(settings):
    pem = sealing.pem(sealing.new_key())
    sealed = sealing.seal(pem)
    assert sealing.is_sealed(sealed) and pem not in sealed
    assert sealing.unseal(sealed) == pem
    settings.DOMAINS_KEY_ENCRYPTION_KEY = KEY_B
    with pytest.raises(sealing.InvalidToken):
        sealing.unseal(sealed)


def test_the_encryption_key_is_not_derived_from_the_secret_key(settings):
    sealed = sealing.seal(sealing.pem(sealing.new_key()))
    settings.SECRET_KEY = "a new secret key"
    assert sealing.unseal(sealed).startswith(sealing.PEM_START)


# --- Who holds the key ----------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_web_process_starts_and_serves_without_the_key(settings, tmp_path):
    env = without_key(service_env(settings))
    assert env["DEBUG"] == "0"
    with web_server_process(env, tmp_path) as (base, _):
        assert requests.get(base + "/readyz", timeout=10).status_code == 200
        page = requests.get(base + "/v1/pets", timeout=10)
        assert page.status_code == 401  # the API answers: a key is asked for, not a 500
    assert run(manage("check"), env).returncode == 0


@pytest.mark.parametrize("process", ["edge", "worker"])
def test_the_edge_and_the_worker_refuse_to_start_without_the_key(settings, process):
    env = without_key(service_env(settings))
    command = manage("edge") if process == "edge" else worker()
    line = one_line_naming_the_key(run(command, env))
    assert "is not set" in line and RECIPE in line


def test_a_worker_on_the_checks_queue_alone_starts_without_the_key(settings):
    """It never opens a key, so it is started without one (compose, the production block)."""
    env = without_key(service_env(settings))
    command = [*worker(), "-Q", settings.CHECKS_QUEUE, "--loglevel", "INFO"]
    with subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as process:
        try:
            assert process.stdout is not None
            seen = []
            for line in process.stdout:  # ends if the worker exits
                seen.append(line)
                if " ready." in line:
                    break
            assert any(" ready." in line for line in seen), "".join(seen)
        finally:
            process.terminate()
            process.wait(timeout=30)


def test_with_debug_on_they_refuse_too_and_say_where_a_development_key_is(settings):
    env = {**without_key(service_env(settings)), "DEBUG": "1"}
    for command in (manage("edge"), manage("resealkeys"), worker()):
        line = one_line_naming_the_key(run(command, env))
        assert "is not set" in line and "var/local.env" in line and RECIPE in line


# --- What a key must be ---------------------------------------------------------------


# Each named in the test ids rather than shown: some are drawn at import, and every xdist
# worker must collect the same ids.
BAD_KEYS = {
    "short": "test-only-not-secret",  # not 32 bytes
    "not-base64": "correct horse battery staple and a few more words",  # not urlsafe base64
    "all-zero": "A" * 43,  # 32 bytes, all zero: not random
    "hex": secrets.token_hex(16),  # 32 characters, 16 random bytes
}


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        *(
            pytest.param(variable, value, id=f"{variable}-{name}")
            for variable in ("DOMAINS_KEY_ENCRYPTION_KEY", "DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS")
            for name, value in BAD_KEYS.items()
        ),
        # Two keys where one goes.
        pytest.param(
            "DOMAINS_KEY_ENCRYPTION_KEY",
            f"{KEY_A},{KEY_B}",
            id="DOMAINS_KEY_ENCRYPTION_KEY-two-keys",
        ),
        pytest.param(
            "DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS",
            f"{KEY_A},{BAD_KEYS['short']}",
            id="DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS-a-key-and-a-short-one",
        ),
    ],
)
def test_a_key_that_is_not_32_random_bytes_in_urlsafe_base64_is_refused(variable, value):
    env = {**os.environ, "DOMAINS_KEY_ENCRYPTION_KEY": KEY_B, variable: value}
    result = run(manage("check"), env)
    assert result.returncode != 0
    assert f"{variable} must be at least 32 random bytes in urlsafe base64" in result.stderr
    assert RECIPE in result.stderr
    assert value not in result.stderr  # a secret is never repeated


@pytest.mark.parametrize(
    "value",
    [secrets.token_urlsafe(32), secrets.token_urlsafe(50)],
    ids=["32-random-bytes", "50-random-bytes"],
)
def test_a_token_or_a_fernet_key_is_accepted(value):
    for key in (value, Fernet.generate_key().decode()):
        env = {**os.environ, "DOMAINS_KEY_ENCRYPTION_KEY": key}
        assert run(manage("check"), env).returncode == 0


# --- A key that cannot open what is stored --------------------------------------------


@pytest.fixture
def sealed_with_a(settings, dns_server, www, tmp_path) -> Certificate:
    """A certificate (and the local CA) sealed under KEY_A, committed, in a CA folder of
    this test's own."""
    settings.DOMAINS_KEY_ENCRYPTION_KEY = KEY_A
    settings.DOMAINS_CA_DIR = tmp_path / "ca"
    go_live(www, "issuing")
    certificate = certificates.certificate_issue(domain_id=www.pk)
    assert certificate is not None
    return certificate


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("process", ["check", "edge", "worker"])
def test_a_key_that_cannot_open_the_stored_keys_stops_check_the_edge_and_the_worker(
    settings, sealed_with_a, process
):
    env = service_env(settings, DOMAINS_KEY_ENCRYPTION_KEY=KEY_B)
    command = {"check": manage("check"), "edge": manage("edge"), "worker": worker()}[process]
    line = one_line_naming_the_key(run(command, env))
    assert "cannot open the private key of Certificate" in line
    assert "DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS" in line and "resealkeys" in line
    # With the key that sealed them, check is clean.
    assert run(manage("check"), service_env(settings)).returncode == 0


@pytest.mark.django_db(transaction=True)
def test_a_key_that_cannot_open_the_local_ca_stops_check(settings, sealed_with_a):
    Certificate.objects.all().delete()
    env = service_env(settings, DOMAINS_KEY_ENCRYPTION_KEY=KEY_B)
    line = one_line_naming_the_key(run(manage("check"), env))
    assert "cannot open the private key of PlatformKey local_ca" in line


# --- Rotation -------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_rotation_reads_with_the_old_key_seals_with_the_new_and_resealkeys_drops_the_old(
    settings, sealed_with_a
):
    acmeclient.account_key()  # the ACME account's key, sealed under A beside the local CA's
    settings.DOMAINS_KEY_ENCRYPTION_KEY = KEY_B
    settings.DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS = [KEY_A]

    stored = Certificate.objects.get(pk=sealed_with_a.pk)
    assert sealing.unseal(stored.key_pem).startswith(sealing.PEM_START)  # read with A
    assert not sealing.is_current(stored.key_pem)
    assert sealing.is_current(sealing.seal("new"))  # sealed with B

    out = StringIO()
    call_command("resealkeys", stdout=out)
    assert (
        out.getvalue().strip() == "Resealed 3 private keys under the current key (0 already were)."
    )
    again = StringIO()
    call_command("resealkeys", stdout=again)
    assert (
        again.getvalue().strip()
        == "Resealed 0 private keys under the current key (3 already were)."
    )

    settings.DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS = []  # A is gone
    stored.refresh_from_db()
    assert load_pem_private_key(sealing.unseal(stored.key_pem).encode(), None)
    for platform_key in PlatformKey.objects.all():  # the local CA's, the ACME account's
        assert sealing.unseal(platform_key.key_pem).startswith(sealing.PEM_START)
    assert acmeclient.account_key()
    # The CA's key, resealed, still signs.
    assert certificates.certificate_renew(domain_id=stored.domain_id, issued_before=timezone.now())


@pytest.mark.django_db(transaction=True)
def test_resealkeys_refuses_in_one_line_when_no_key_opens_a_stored_one(settings, sealed_with_a):
    settings.DOMAINS_KEY_ENCRYPTION_KEY = KEY_B
    with pytest.raises(CommandError, match="DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS"):
        call_command("resealkeys", skip_checks=True)
    settings.DOMAINS_KEY_ENCRYPTION_KEY = KEY_A
    assert Certificate.objects.get(pk=sealed_with_a.pk).key_pem == sealed_with_a.key_pem


# --- The local CA ---------------------------------------------------------------------


def test_the_local_ca_is_the_default_and_names_its_caa_identity(settings):
    assert settings.DOMAINS_CA == "local"
    assert pki.authority().caa_identities() == (CA_ID,)


@pytest.mark.django_db
def test_a_local_certificate_is_stored_with_its_key_sealed_issuer_and_renewal(
    dns_server, www, client, alice
):
    go_live(www, "issuing")
    certificate = certificates.certificate_issue(domain_id=www.pk)
    assert certificate is not None
    stored = Certificate.objects.get(pk=certificate.pk)
    assert sealing.is_sealed(stored.key_pem)
    load_pem_private_key(sealing.unseal(stored.key_pem).encode(), None)
    assert stored.issuer == f"{CA_ID} local CA"
    # Two thirds of 90 days, up to 3 days earlier (domains.policy.RENEWAL_SPREAD).
    assert 57 <= (stored.renew_after - stored.not_before).days <= 60
    client.force_login(alice)
    page = client.get(reverse("dashboard:domain_detail", args=["shop", www.hostname]))
    assert page.status_code == 200
    html = page.content.decode()
    assert stored.issuer in html and stored.serial in html
    assert f"{stored.renew_after:%Y-%m-%d}" in html
