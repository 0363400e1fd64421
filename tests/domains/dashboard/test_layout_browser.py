"""Every dashboard page, as Chromium lays it out at a small phone's width, a common phone's,
a tablet's and a laptop's: nothing reaches past the viewport or out of its card, and axe-core
finds no serious or critical violation (its colour-contrast rule among them) at any width.

The pages are every URL of domains.urls that answers a GET with a page, built for alice's
objects by tests/security/dashboard.py, with the sign-in page and the password change besides.
`DASHBOARD_SCREENSHOTS=docs/screenshots` refreshes docs/screenshots/phone-*.png, the main
pages at a phone's width."""

from __future__ import annotations

import pytest
from django.test import Client

from domains.models import Domain
from petstore.apikeys.services import api_key_issue
from tests.fixtures.accessibility import (
    WIDTHS,
    assert_accessible,
    assert_fits,
    assert_reviewed_rules_hold,
)
from tests.fixtures.browser import sign_in
from tests.fixtures.people import PASSWORD
from tests.security import dashboard

# alice's objects, every kind a dashboard URL names (a fixture, requested by name below).
alices = dashboard.alices

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = 390


# The pages docs/screenshots shows at a phone's width, by URL name.
PICTURED = {"home", "project_domains", "domain_detail", "members", "notification_settings"}
OUTSIDE_THE_DASHBOARD = ["/accounts/password_change/"]


@pytest.fixture
def every_page(alices, alice):
    """alice's objects, with what makes the pages longest: a failed check's explanation on
    www's page and an API key in the keys' table."""
    Domain.objects.filter(pk=alices["apex"].pk).update(
        check_code="conflicting_record",
        check_message="example.com has A 192.0.2.10 instead of the record to create.",
        check_expected="ALIAS domains.petstore.localhost",
        check_found="A 192.0.2.10",
    )
    api_key_issue(user=alice, name="a laptop's key with a long name")
    # The pages among the URLs: what answers alice's GET with HTML (the others are actions,
    # which take a POST, and JSON).
    client = Client()
    client.force_login(alice)
    pages = []
    urls = [*dashboard.dashboard_urls_for(alices), *((p, p) for p in OUTSIDE_THE_DASHBOARD)]
    for name, path in urls:
        response = client.get(path)
        if response.status_code == 200 and response["content-type"].startswith("text/html"):
            pages.append((name, path))
    return pages


# Some twenty pages, each laid out and checked by axe-core: a minute alone, more on a busy
# machine.
@pytest.mark.timeout(360)
@pytest.mark.parametrize("width", WIDTHS)
def test_every_dashboard_page_fits_its_width_and_passes_axe(
    width, every_page, page, live_dashboard, screenshot
):
    page.set_viewport_size({"width": width, "height": 800})
    # Every page's findings, reported together: a layout rule breaks many pages at once.
    wrong: list[str] = []

    def check() -> None:
        for held_to in (assert_fits, assert_accessible, assert_reviewed_rules_hold):
            try:
                held_to(page)
            except AssertionError as finding:
                wrong.append(str(finding))

    page.goto(live_dashboard.url + "/dashboard/")
    check()  # the sign-in page
    sign_in(page, live_dashboard, "alice", PASSWORD)

    shown = []
    for name, path in every_page:
        response = page.goto(live_dashboard.url + path)
        assert response is not None and response.status == 200, path
        check()
        if width == PHONE and name in PICTURED:
            screenshot(page, f"phone-{name.replace('_', '-')}")
        shown.append(name)
    assert not wrong, "\n\n".join(wrong)
    assert set(PICTURED) <= set(shown)
    assert len(shown) >= 15, shown
