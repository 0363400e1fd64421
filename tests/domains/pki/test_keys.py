"""Private keys at rest: sealed under DOMAINS_KEY_ENCRYPTION_KEY, which production requires;
the local CA behind the same interface; the issuer and renewal date a page shows."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from django.urls import reverse

from domains import pki
from domains.models import Certificate
from domains.pki import keys
from domains.services import certificates
from tests.fixtures.domains import CA_ID, go_live
from tests.processes import ROOT


def test_a_sealed_key_opens_only_with_its_own_encryption_key(settings):
    pem = keys.pem(keys.new_key())
    sealed = keys.seal(pem)
    assert keys.is_sealed(sealed) and pem not in sealed
    assert keys.unseal(sealed) == pem
    settings.DOMAINS_KEY_ENCRYPTION_KEY = "another key"
    with pytest.raises(keys.InvalidToken):
        keys.unseal(sealed)


def test_the_encryption_key_is_not_derived_from_the_secret_key(settings):
    sealed = keys.seal(keys.pem(keys.new_key()))
    settings.SECRET_KEY = "a new secret key"
    assert keys.unseal(sealed).startswith(keys.PEM_START)


def test_production_refuses_to_start_without_a_key_encryption_key():
    env = {k: v for k, v in os.environ.items() if k not in {"DOMAINS_KEY_ENCRYPTION_KEY", "DEBUG"}}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**env, "SECRET_KEY": "set"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "DOMAINS_KEY_ENCRYPTION_KEY must be set" in result.stderr


def test_the_local_ca_is_the_default_and_names_its_caa_identity(settings):
    assert settings.DOMAINS_CA == "local"
    assert pki.authority().caa_identity() == CA_ID


@pytest.mark.django_db
def test_a_local_certificate_is_stored_with_its_key_sealed_issuer_and_renewal(
    dns_server, www, client, alice
):
    go_live(www, "issuing")
    certificate = certificates.certificate_issue(domain_id=www.pk)
    assert certificate is not None
    stored = Certificate.objects.get(pk=certificate.pk)
    assert keys.is_sealed(stored.key_pem)
    load_pem_private_key(keys.unseal(stored.key_pem).encode(), None)
    assert stored.issuer == f"{CA_ID} local CA"
    assert (stored.renew_after - stored.not_before).days == 60  # two thirds of 90 days
    client.force_login(alice)
    page = client.get(reverse("dashboard:domain_detail", args=["shop", www.hostname]))
    assert page.status_code == 200
    html = page.content.decode()
    assert stored.issuer in html and stored.serial in html
    assert f"{stored.renew_after:%Y-%m-%d}" in html
