"""Every webhook test starts with the webhooks' Redis counters empty."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _clean_limits(clean_webhook_limits):
    return clean_webhook_limits
