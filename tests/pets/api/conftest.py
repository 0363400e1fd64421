"""The listPets hot path's tests' data: seven pets of two statuses, one name with
characters JSON must escape, some in a category; and no rate limits where a test replays
many requests."""

from __future__ import annotations

import pytest

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
