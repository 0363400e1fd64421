"""Personas and projects for the dashboard tests, built with the engine's services.

alice owns a Pro project with a successful deploy ("shop") and a Free project
without one ("sketch"); bob owns his own Pro project; carol is staff.
Import the fixtures you use into the test module.
"""

from __future__ import annotations

import pytest

from domains.services.projects import deploy_record, project_create

# The personas shared with the engine's tests, re-exported for modules outside tests/domains.
from tests.domains.conftest import PASSWORD, alice, bob, make_user, shop

__all__ = [
    "PASSWORD",
    "alice",
    "alice_client",
    "bob",
    "bobs_project",
    "carol",
    "plain_http",
    "shop",
    "sketch",
]


@pytest.fixture(autouse=True)
def plain_http(settings):
    """The test client and the live server speak plain HTTP; production redirects to HTTPS."""
    settings.SECURE_SSL_REDIRECT = False
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False


@pytest.fixture
def carol(db):
    return make_user("carol", is_staff=True, is_superuser=True)


@pytest.fixture
def sketch(alice):
    return project_create(slug="sketch", owner=alice, plan="free", name="Sketch")


@pytest.fixture
def bobs_project(bob):
    project = project_create(slug="bobs", owner=bob, plan="pro", name="Bob's")
    deploy_record(project=project, html="<h1>Bob</h1>")
    return project


@pytest.fixture
def alice_client(client, alice):
    client.force_login(alice)
    return client
