"""`make run`'s mail inbox: every mail the platform sends under DEBUG is kept in var/mail,
whichever process sends it, and read at /dev/mail/ by a signed-in user, the newest first,
its links clickable; with DEBUG off there is no such page."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html import unescape

import pytest
from django.core.mail import EmailMultiAlternatives

from devtools import mailinbox
from domains.services.notifications import owner_email_change_request
from tests.processes import ROOT


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SECRET_KEY", "DEBUG", "EMAIL_URL", "PETSTORE_ENV_FILE"}
    }
    return subprocess.run(  # noqa: S603 (this checkout's manage.py)
        [sys.executable, "manage.py", *args],
        cwd=ROOT, env={**base, "SECRET_KEY": "x" * 50, **env},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_a_mail_the_platform_sends_is_listed_and_its_link_can_be_followed(
    dev_pages, alice, alice_client
):
    owner_email_change_request(user=alice, email="alice@example.test")
    inbox = alice_client.get("/dev/mail/")
    assert inbox.status_code == 200
    page = inbox.content.decode()
    assert "Confirm your address for domain notifications" in page
    assert "alice@example.test" in page
    [name] = re.findall(r'href="/dev/mail/([0-9a-f-]+)/"', page)

    mail = alice_client.get(f"/dev/mail/{name}/").content.decode()
    assert "Confirm your address for domain notifications" in mail
    [link] = re.findall(r'<a href="(http://[^"]+/account/confirm/[^"]+)"', mail)
    confirm = alice_client.get(unescape(link))
    assert confirm.status_code == 200
    assert "alice@example.test" in confirm.content.decode()


def test_the_newest_mail_comes_first(dev_pages, alice_client):
    for subject in ("mail-one", "mail-two", "mail-three"):
        EmailMultiAlternatives(subject, "text", None, ["o@example.test"]).send()
    page = alice_client.get("/dev/mail/").content.decode()
    assert page.index("mail-three") < page.index("mail-two") < page.index("mail-one")


def test_a_mail_s_html_part_is_its_own_sandboxed_page(dev_pages, alice_client):
    message = EmailMultiAlternatives("Digest", "the text", None, ["o@example.test"])
    message.attach_alternative('<p>the <a href="https://example.test/">html</a></p>', "text/html")
    message.send()
    [mail] = mailinbox.newest_first()
    detail = alice_client.get(f"/dev/mail/{mail.name}/").content.decode()
    assert f'href="/dev/mail/{mail.name}/html/"' in detail
    html = alice_client.get(f"/dev/mail/{mail.name}/html/")
    assert html.content.decode() == '<p>the <a href="https://example.test/">html</a></p>'
    assert html["Content-Security-Policy"].startswith("sandbox ")
    assert "script-src" not in html["Content-Security-Policy"]  # default-src 'none' holds


def test_a_signed_out_visitor_is_sent_to_sign_in(dev_pages, client):
    EmailMultiAlternatives("secret link", "text", None, ["o@example.test"]).send()
    answer = client.get("/dev/mail/")
    assert answer.status_code == 302
    assert answer["Location"].startswith("/accounts/login/")
    [mail] = mailinbox.newest_first()
    assert client.get(f"/dev/mail/{mail.name}/").status_code == 302


@pytest.mark.parametrize("name", ["../secret", "x", "0" * 20 + "-" + "g" * 32, "..%2Fmail"])
def test_a_name_that_is_no_kept_mail_is_404(dev_pages, alice_client, name):
    assert alice_client.get(f"/dev/mail/{name}/").status_code == 404


def test_with_debug_off_the_pages_are_404_even_where_a_url_conf_mounts_them(
    dev_pages, settings, alice_client
):
    EmailMultiAlternatives("kept", "text", None, ["o@example.test"]).send()
    [mail] = mailinbox.newest_first()
    settings.DEBUG = False
    for path in ("/dev/mail/", f"/dev/mail/{mail.name}/", "/dev/webhooks/demo/"):
        assert alice_client.get(path).status_code == 404, path


def test_production_s_url_conf_has_no_development_page(db, settings, alice_client):
    """The tests' settings are production's (DEBUG off): petstore/urls.py, no /dev/."""
    assert settings.ROOT_URLCONF == "petstore.urls"
    assert alice_client.get("/dev/mail/").status_code == 404


@pytest.mark.parametrize(("debug", "urlconf"), [("0", "petstore.urls"), ("1", "devtools.urls")])
def test_the_settings_mount_the_development_pages_under_debug_only(debug, urlconf):
    code = "from django.conf import settings as s; print(s.ROOT_URLCONF, s.EMAIL_BACKEND)"
    result = _manage("shell", "-c", code, DEBUG=debug)
    assert result.returncode == 0, result.stderr
    root, backend = result.stdout.split()[-2:]
    assert root == urlconf
    assert (backend == "devtools.mailinbox.InboxBackend") == (debug == "1")


def test_another_process_s_mail_lands_in_the_same_inbox(dev_pages, alice_client):
    """The workers and the web process are processes of their own on the same settings:
    a mail sent by one (`sendtestemail` here) is read on the other's page."""
    result = _manage(
        "sendtestemail", "owner@example.test", DEBUG="1", PETSTORE_VAR_DIR=str(dev_pages)
    )
    assert result.returncode == 0, result.stderr
    [mail] = mailinbox.newest_first()
    assert mail.to == "owner@example.test"
    # Its process's output has one line saying where to read it, not the whole mail.
    assert f"/dev/mail/{mail.name}/" in result.stderr
    assert "If you're reading this" not in result.stdout + result.stderr
    assert mail.subject in alice_client.get("/dev/mail/").content.decode()


def test_an_inbox_url_is_refused_where_debug_is_off():
    result = _manage("check", EMAIL_URL="inbox://")
    assert result.returncode != 0
    assert "EMAIL_URL must start with smtp://, smtps:// or console://" in result.stderr
    assert "inbox:// under DEBUG only" in result.stderr
