"""`manage.py loaddomainsdemo`: the newcomer's demo owner, projects and starter zone file."""

from __future__ import annotations

import io
import os

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from devtools.devdns import DNSServer
from devtools.devserver import hint_lines
from devtools.starterzones import API_DEMO_DOMAIN, DEMO_DOMAIN
from domains.models import Deploy, Project
from domains.pki.local import CERT_FILE
from domains.services.custom_domains import domain_add
from tests.fixtures.domains import TARGET, check
from tests.processes import ROOT


@pytest.fixture
def demo_settings(settings, tmp_path):
    settings.DEBUG = True
    settings.VAR_DIR = tmp_path
    settings.DOMAINS_DEV_DNS_ZONES = tmp_path / "dns-zones"
    return settings


def _run() -> str:
    out = io.StringIO()
    call_command("loaddomainsdemo", stdout=out)
    return out.getvalue()


def _password(output: str) -> str:
    return next(line for line in output.splitlines() if "password:" in line).split()[-1]


def test_demo_is_idempotent_and_prints_a_working_sign_in(db, demo_settings):
    first = _run()
    second = _run()
    password = _password(first)
    assert _password(second) == password
    owner = get_user_model().objects.get(username="demo")
    assert owner.check_password(password)
    # Owner mail has somewhere to go out of the box (make run's mail inbox keeps it).
    assert owner.email == "demo@example.test"
    assert "  owner mail to: demo@example.test (read at http://localhost:" in first
    assert "/dev/mail/)" in first

    shop = Project.objects.get(slug="demo-shop", owner=owner)
    sketch = Project.objects.get(slug="demo-sketch", owner=owner)
    assert (shop.plan, sketch.plan) == ("pro", "free")
    assert (shop.name, sketch.name) == ("Demo shop", "Demo sketch")  # the plan is a badge
    assert Deploy.objects.filter(project=shop, succeeded=True).count() == 1
    assert sketch.latest_deploy is None
    assert Project.objects.count() == 2


def test_demo_refuses_without_debug(db, demo_settings):
    demo_settings.DEBUG = False
    with pytest.raises(CommandError):
        _run()


def _save(zone_file, text: str) -> None:
    """Write like an editor a moment later: a distinct mtime, so devdns re-reads the file."""
    later = zone_file.stat().st_mtime_ns + 1_000_000_000
    zone_file.write_text(text)
    os.utime(zone_file, ns=(later, later))


def test_starter_zone_verifies_once_the_newcomer_adds_the_cname(db, demo_settings):
    _run()
    zone_file = demo_settings.DOMAINS_DEV_DNS_ZONES / "example.test.zone"
    shop = Project.objects.get(slug="demo-shop")
    domain = domain_add(project=shop, hostname="shop.example.test", actor=None)
    server = DNSServer("127.0.0.1", 0, zone_dir=zone_file.parent).start()
    try:
        demo_settings.DOMAINS_DNS_NAMESERVERS = [server.address]
        server.reload_zones()
        assert check(domain).check_code == "nxdomain"

        # The walk-through in docs/dashboard.md: un-comment the CNAME line.
        starter = zone_file.read_text()
        text = starter.replace(f"; shop  IN CNAME {TARGET}.", f"shop  IN CNAME {TARGET}.")
        _save(zone_file, text)
        server.reload_zones()
        assert check(domain).check_code == "ok"

        # ... and to see the failures, an A record or a wrong target instead of it.
        for line, code in [
            ("shop  IN A     192.0.2.10", "conflicting_record"),
            ("shop  IN CNAME elsewhere.example.net.", "wrong_target"),
        ]:
            _save(zone_file, starter.replace("; " + line, line))
            server.reload_zones()
            checked = check(domain)
            assert checked.check_code == code, checked.check_message
    finally:
        server.stop()


def test_getting_starteds_api_domain_verifies_from_the_starter_zone_as_written(db, demo_settings):
    """Getting started's three curl lines add api.example.test and ask for its check: the starter
    zone already serves its CNAME, and the dashboard walk-through's name stays free."""
    _run()
    zone_file = demo_settings.DOMAINS_DEV_DNS_ZONES / "example.test.zone"
    shop = Project.objects.get(slug="demo-shop")
    assert API_DEMO_DOMAIN != DEMO_DOMAIN
    domain = domain_add(project=shop, hostname=API_DEMO_DOMAIN, actor=None)
    server = DNSServer("127.0.0.1", 0, zone_dir=zone_file.parent).start()
    try:
        demo_settings.DOMAINS_DNS_NAMESERVERS = [server.address]
        server.reload_zones()
        assert check(domain).check_code == "ok"
    finally:
        server.stop()
    assert domain_add(project=shop, hostname=DEMO_DOMAIN, actor=None).hostname == DEMO_DOMAIN
    page = " ".join((ROOT / "docs" / "getting-started.md").read_text().split())
    assert f'{{"hostname":"{API_DEMO_DOMAIN}"}}' in page
    assert f"Add domain `{DEMO_DOMAIN}`" in page


def test_demo_prints_the_https_url_and_the_local_ca_root_to_trust(db, demo_settings):
    demo_settings.HTTPS_PORT = 8443
    output = _run()
    root = demo_settings.DOMAINS_CA_DIR / "ca-cert.pem"
    assert root.read_text().startswith("-----BEGIN CERTIFICATE-----")  # made, not just named
    assert "HTTPS, once shop.example.test is Active: https://shop.example.test:8443/" in output
    assert f"local CA root (trust it to verify): {root}" in output
    assert (
        f"curl --resolve shop.example.test:8443:127.0.0.1 --cacert {root} "
        "https://shop.example.test:8443/"
    ) in output


DASHBOARD_DOC = ROOT / "docs" / "dashboard.md"


def test_the_docs_say_where_the_local_ca_root_is_and_how_to_trust_it():
    """Without it the Active domain's HTTPS page ends in a certificate error."""
    docs = " ".join(DASHBOARD_DOC.read_text().split())  # as read, whatever the line breaks
    trust = docs[docs.index("### Trust the local CA") :]
    root = f"var/ca/{CERT_FILE}"  # DOMAINS_CA_DIR's default, in the checkout
    assert f"The root certificate is `{root}` in the checkout" in trust
    assert f"--cacert {root} https://shop.example.test:8443/" in trust
    chromium = trust[trust.index("**Chromium / Chrome**") : trust.index("**Firefox**")]
    assert "Manage certificates" in chromium and f"-i {root}" in chromium
    firefox = trust[trust.index("**Firefox**") :]
    assert "Authorities → Import" in firefox and "Trust this CA to identify websites" in firefox


def test_the_docs_say_the_hints_come_last_and_show_them_as_make_run_prints_them():
    docs = DASHBOARD_DOC.read_text()
    assert "**Its hints come last.**" in docs
    lines = hint_lines("http://localhost:8000", "var/local.env")
    shown = docs[docs.index(lines[0].strip()) - 2 :]
    assert shown.splitlines()[: len(lines)] == lines


def test_a_demo_owner_without_an_address_gets_one_and_a_changed_one_stays(db, demo_settings):
    _run()
    users = get_user_model()
    users.objects.filter(username="demo").update(email="")  # made before the demo had one
    _run()
    assert users.objects.get(username="demo").email == "demo@example.test"
    users.objects.filter(username="demo").update(email="me@example.org")  # the newcomer's own
    _run()
    assert users.objects.get(username="demo").email == "me@example.org"
