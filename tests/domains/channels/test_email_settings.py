"""EMAIL_URL: one setting for the mail server, read by a typed reader; under DEBUG (`make
run`) with none set, the mail is kept in the development inbox (tests/devtools/
test_mail_inbox.py), and `console://` prints it in the process's output."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from petstore.env import email_url
from tests.processes import ROOT


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SECRET_KEY", "DEBUG", "EMAIL_URL", "PETSTORE_ENV_FILE"}
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_console_prints_the_mail_in_the_process_s_output():
    result = _manage("sendtestemail", "owner@example.test", DEBUG="1", EMAIL_URL="console://")
    assert result.returncode == 0, result.stderr
    assert "To: owner@example.test" in result.stdout
    assert "From: noreply@petstore.localhost" in result.stdout


def test_production_without_email_url_uses_smtp_on_localhost():
    code = (
        "from django.conf import settings as s; print(s.EMAIL_BACKEND, s.EMAIL_HOST, s.EMAIL_PORT)"
    )
    result = _manage("shell", "-c", code, SECRET_KEY="x" * 50)
    assert result.stdout.splitlines()[-1].split() == [
        "django.core.mail.backends.smtp.EmailBackend",
        "localhost",
        "25",
    ]


def test_an_smtp_url_gives_every_email_setting():
    assert email_url("EMAIL_URL", "smtp://mailer:p%40ss@smtp.example.test:587/?tls=1") == {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "smtp.example.test",
        "EMAIL_PORT": 587,
        "EMAIL_HOST_USER": "mailer",
        "EMAIL_HOST_PASSWORD": "p@ss",
        "EMAIL_USE_TLS": True,
        "EMAIL_USE_SSL": False,
        "EMAIL_TIMEOUT": 10.0,
    }
    smtps = email_url("EMAIL_URL", "smtps://smtp.example.test")
    assert (smtps["EMAIL_PORT"], smtps["EMAIL_USE_SSL"]) == (465, True)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("http://smtp.example.test", "must start with smtp://"),
        ("smtp://smtp.example.test/?tsl=1", "unknown option(s) tsl"),
        ("smtp://smtp.example.test/?tls=maybe", "tls must be 1 or 0"),
        ("smtp://smtp.example.test:port", "EMAIL_URL"),
        ("smtps://smtp.example.test/?tls=1", "not both"),
    ],
)
def test_a_bad_email_url_stops_the_process_saying_why(value, says):
    with pytest.raises(ImproperlyConfigured, match=None) as error:
        email_url("EMAIL_URL", value)
    assert says in str(error.value)


def test_a_bad_email_url_is_one_line_at_start_up():
    result = _manage("check", DEBUG="1", EMAIL_URL="mailto:someone")
    assert result.returncode != 0
    assert "EMAIL_URL must start with smtp://" in result.stderr
