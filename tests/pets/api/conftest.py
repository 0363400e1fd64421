"""The listPets hot path's tests' data: seven pets of two statuses, one name with
characters JSON must escape, some in a category; and no rate limits where a test replays
many requests."""

from __future__ import annotations

import pytest
from django.core import signals
from django.db import close_old_connections

from pets.models import PetStatus


@pytest.fixture
def pets(make_pet, cats):
    return [
        make_pet(
            f"P{i} ✓ \u2028" if i == 3 else f"P{i}",
            status=(PetStatus.SOLD if i % 2 else PetStatus.AVAILABLE),
            category=cats if i % 3 == 0 else None,
        )
        for i in range(7)
    ]


@pytest.fixture
def no_rate_limits(settings):
    settings.API_RATE_LIMIT = settings.API_ADDRESS_RATE_LIMIT = ""


@pytest.fixture
def test_transaction_kept():
    """As Django's test client does: a request's start and end leave the connection, which
    holds the test's transaction, open (for requests through the WSGI application)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)
