"""What the DNS says, in a real headless Chromium: the owner's Verify asks the zone's own
name servers (real ones on loopback, tests/fixtures/nameservers.py) through a real worker,
and the domain page shows each server's answer, a ✓ or a ✗, and the finding above them;
after the owner fixes the lagging server, Verify shows them all agreeing.

`DASHBOARD_SCREENSHOTS=docs/screenshots` refreshes docs/screenshots/domain-doctor.png,
the panel for a zone whose servers disagree."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.fixtures.accessibility import assert_accessible
from tests.fixtures.browser import sign_in
from tests.fixtures.domains import TARGET
from tests.fixtures.nameservers import NS1, NS2, OLD, WWW, disagreeing
from tests.fixtures.people import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_verify_shows_what_each_name_server_says(
    zone, page, live_dashboard, celery_worker, www, screenshot, settings
):
    settings.DOMAINS_VERIFY_COOLDOWN = 0
    disagreeing(zone)  # ns2 still has the old CNAME, which the resolvers got from it
    sign_in(page, live_dashboard, "alice", PASSWORD)
    page.goto(live_dashboard.url + f"/dashboard/projects/shop/domains/{WWW}/")
    expect(page.locator("#doctor")).to_have_count(0)  # nothing asked yet

    page.get_by_role("button", name="Verify", exact=True).click()
    panel = page.locator("#doctor")
    expect(panel.get_by_role("heading", name="What the DNS says")).to_be_visible(timeout=30_000)
    finding = panel.locator('[data-code="nameservers_disagree"]')
    expect(finding).to_contain_text(f"{NS2} still gives another answer (CNAME {OLD})")
    rows = panel.locator("tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text(NS1)
    expect(rows.nth(0)).to_contain_text(f"CNAME {TARGET}.")
    expect(rows.nth(0).locator(".result-ok")).to_have_text("✓")
    expect(rows.nth(1)).to_contain_text(NS2)
    expect(rows.nth(1)).to_contain_text(f"CNAME {OLD}")
    expect(rows.nth(1).locator(".result-fail")).to_have_text("✗")
    # Never "all is well" above a ✗ (the summary is derived from the rows).
    expect(panel.locator(".callout-ok")).to_have_count(0)
    screenshot(page, "domain-doctor", of="#doctor")

    # The owner's provider catches up on ns2, the resolvers' copy runs out: Verify again.
    for server in (zone.server(NS2), zone.resolver):
        server.remove(WWW)
        server.add(WWW, "CNAME", TARGET + ".")
    page.get_by_role("button", name="Verify", exact=True).click()
    expect(panel.locator(".finding")).to_have_text(
        "Every name server of the zone gives what the platform needs.", timeout=30_000
    )
    expect(panel.locator(".result-ok")).to_have_count(2)
    expect(panel.locator(".result-fail")).to_have_count(0)
    assert_accessible(page)
