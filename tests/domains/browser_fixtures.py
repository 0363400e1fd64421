"""A real headless Chromium (Debian's package) driven by Playwright's sync API."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import CHROMIUM  # the path the `browser` marker checks
from tests.domains.dashboard_fixtures import *  # noqa: F403  (plain_http)

__all__ = ["live_dashboard", "page", "screenshot", "sign_in"]

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    # Custom domains of the tests resolve to the live server on loopback, so the
    # browser asks for them by name exactly like a visitor would.
    "--host-resolver-rules=MAP *.example.test 127.0.0.1, EXCLUDE localhost",
]


@pytest.fixture
def live_dashboard(transactional_db, plain_http):
    """A live server of our own, started after `plain_http`.

    pytest-django's session-wide `live_server` builds its middleware once, maybe
    before this test's settings; SecurityMiddleware and CsrfViewMiddleware read
    their settings when built, so a production-like HTTPS redirect would stay on.
    """
    from pytest_django.live_server_helper import LiveServer

    server = LiveServer("localhost")
    server._live_server_modified_settings.enable()
    try:
        yield server
    finally:
        server.stop()
        server._live_server_modified_settings.disable()


@pytest.fixture
def page(monkeypatch, live_dashboard):
    # (It takes live_dashboard so the browser closes before the server stops.)
    # Playwright's sync API runs an event loop in this thread; the test's own ORM
    # calls are still plain synchronous code.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    from django.db import connections
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            context = browser.new_context(viewport={"width": 1100, "height": 900})
            context.set_default_timeout(15_000)
            yield context.new_page()
        finally:
            browser.close()
            # ORM calls made while Playwright runs (fixtures set up after this one, the
            # test body) get connections of their own; close them here, or PostgreSQL
            # refuses to drop the test database at the end of the session.
            connections.close_all()


@pytest.fixture
def screenshot(tmp_path):
    """Save a full-page PNG; DASHBOARD_SCREENSHOTS=docs/screenshots refreshes the docs' copies."""
    folder = Path(os.environ.get("DASHBOARD_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)

    def take(page, name: str) -> Path:
        path = folder / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


def sign_in(page, server, username: str, password: str) -> None:
    page.goto(server.url + "/dashboard/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(server.url + "/dashboard/")
