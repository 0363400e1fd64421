"""The dashboard in a real headless Chromium against the live server."""

from __future__ import annotations

import pytest

from tests.domains.browser_fixtures import *  # noqa: F403
from tests.domains.browser_fixtures import sign_in
from tests.domains.dashboard_fixtures import *  # noqa: F403
from tests.domains.dashboard_fixtures import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_sign_in_page_leads_to_the_owners_projects(page, live_dashboard, shop, screenshot):
    page.goto(live_dashboard.url + "/dashboard/")
    assert page.url.startswith(live_dashboard.url + "/accounts/login/")
    assert page.get_by_role("heading", name="Sign in").is_visible()
    screenshot(page, "01-sign-in")

    sign_in(page, live_dashboard, "alice", PASSWORD)
    assert page.get_by_role("heading", name="Your projects").is_visible()
    page.get_by_role("link", name="Shop", exact=True).click()
    assert page.get_by_role("heading", name="Domains", exact=True).is_visible()
