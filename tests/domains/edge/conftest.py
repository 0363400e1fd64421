"""The certificate endpoint called in this process, as its tests and the wildcard's share it."""

from __future__ import annotations

import math

import pytest

from domains.edge.cache import CertificateCache
from domains.edge.endpoint import Endpoint
from domains.edge.paths import SECRET_FILE

SECRET = "this-tests-edge-secret"


@pytest.fixture
def edge_secret(settings, tmp_path):
    """What `manage.py edge` writes at its start, for the endpoint called in this process."""
    settings.EDGE_DIR = tmp_path
    (tmp_path / SECRET_FILE).write_text(SECRET)


@pytest.fixture
def endpoint() -> Endpoint:
    """The endpoint as served, over a cache of this test's own whose version is read only
    by its first request and by `cache.refresh()`, the served endpoint's thread's beat."""
    return Endpoint(CertificateCache(fresh_for=math.inf), polling=False)
