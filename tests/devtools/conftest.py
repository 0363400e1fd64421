"""`make run`'s development pages as DEBUG serves them: devtools/urls.py as the root URL conf,
and the inbox and the receivers in a folder of the test's own."""

from __future__ import annotations

import pytest


@pytest.fixture
def dev_pages(settings, tmp_path):
    settings.DEBUG = True
    settings.ROOT_URLCONF = "devtools.urls"
    settings.VAR_DIR = tmp_path
    settings.EMAIL_FILE_PATH = tmp_path / "mail"
    settings.EMAIL_BACKEND = "devtools.mailinbox.InboxBackend"
    settings.ALLOWED_HOSTS = ["*"]  # as DEBUG has it
    return tmp_path
