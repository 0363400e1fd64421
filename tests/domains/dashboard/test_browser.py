"""The dashboard in a real headless Chromium against the live server."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from domains.choices import CertState
from domains.models import Domain
from domains.services.custom_domains import domain_add
from domains.services.verification import domain_check
from domains.tasks import enqueue
from tests.fixtures.accessibility import assert_accessible
from tests.fixtures.browser import sign_in
from tests.fixtures.domains import TARGET, check
from tests.fixtures.people import PASSWORD
from tests.processes import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_sign_in_page_leads_to_the_owners_projects(shop, live_dashboard, page, screenshot):
    page.goto(live_dashboard.url + "/dashboard/")
    assert page.url.startswith(live_dashboard.url + "/accounts/login/")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    screenshot(page, "01-sign-in")

    sign_in(page, live_dashboard, "alice", PASSWORD)
    expect(page.get_by_role("heading", name="Your projects")).to_be_visible()
    assert_accessible(page)
    page.get_by_role("link", name="Shop", exact=True).click()
    expect(page.get_by_role("heading", name="Domains", exact=True)).to_be_visible()
    assert_accessible(page)


def test_owner_takes_a_subdomain_from_add_domain_to_a_certificate_and_removes_one(
    page, live_dashboard, dns_server, celery_worker, edge, shop, screenshot, settings
):
    settings.DOMAINS_VERIFY_COOLDOWN = 0  # the owner fixes each record and verifies at once
    port = live_dashboard.url.rsplit(":", 1)[1]
    settings.HTTP_PORT = int(port)  # the port redirects name: the platform's own
    settings.HTTPS_PORT = edge.https_port  # and the TLS edge's, for active domains
    secure = f"https://shop.example.test:{edge.https_port}"
    sign_in(page, live_dashboard, "alice", PASSWORD)
    page.get_by_role("link", name="Shop", exact=True).click()

    # Add domain: the page shows the record to create, each value with a copy button.
    page.get_by_label("Domain or subdomain").fill("shop.example.test")
    page.get_by_role("button", name="Add domain").click()
    expect(page.get_by_role("heading", name="shop.example.test")).to_be_visible()
    records = page.locator("table.records")
    expect(records).to_contain_text("CNAME")
    value = records.locator("td.value button[data-copy]").nth(1).get_attribute("data-copy")
    assert value == TARGET
    expect(page.get_by_text("up to 48 hours")).to_be_visible()
    screenshot(page, "02-dns-records")

    # A conflicting A record first: Verify reports what is wrong and what to do.
    dns_server.add("shop.example.test", "A", "192.0.2.10")
    page.get_by_role("button", name="Verify", exact=True).click()
    failure = page.locator("#check-failure")
    expect(failure).to_contain_text("shop.example.test has A 192.0.2.10 instead of the CNAME")
    screenshot(page, "03-check-failed")

    # The owner fixes the record at the "provider" and verifies again: the page follows
    # the check and the certificate by itself, up to Active.
    dns_server.remove("shop.example.test", "A")
    dns_server.add("shop.example.test", "CNAME", value + ".")
    page.get_by_role("button", name="Verify", exact=True).click()
    badge = page.locator("h1 + .badge")
    expect(badge).to_have_text("Active", timeout=30_000)
    expect(page.locator("#certificate")).to_contain_text("expires")
    screenshot(page, "04-active-with-certificate")

    # A visitor over plain HTTP is sent to the edge, which serves the page over HTTPS (the
    # local CA is not in Chromium's store: tests/domains/edge verify the certificate itself).
    assert page.context.browser is not None
    visitor = page.context.browser.new_context(ignore_https_errors=True).new_page()
    visitor.goto(f"http://shop.example.test:{port}/")
    assert visitor.url == secure + "/"
    expect(visitor.get_by_role("heading", name="Alice's shop")).to_be_visible()

    # A second domain, verified the same way, redirected to the first.
    page.get_by_role("link", name="Shop", exact=True).click()
    page.get_by_label("Domain or subdomain").fill("old.example.test")
    page.get_by_role("button", name="Add domain").click()
    dns_server.add("old.example.test", "CNAME", value + ".")
    page.get_by_role("button", name="Verify", exact=True).click()
    expect(page.locator("h1 + .badge")).to_have_text("Active", timeout=30_000)
    page.get_by_role("link", name="Shop", exact=True).click()
    form = page.locator("form", has=page.get_by_role("button", name="Add redirect"))
    form.locator("select[name=from_domain]").select_option(label="old.example.test")
    form.locator("select[name=to_domain]").select_option(label="shop.example.test")
    expect(form.locator("select[name=status]")).to_have_value("301")
    form.get_by_role("button", name="Add redirect").click()
    expect(page.locator("table.redirects")).to_contain_text("old.example.test")
    page.get_by_text("The project's domains structure (JSON)").click()
    expect(page.locator("#domains-json")).to_contain_text('"from": "old.example.test"')
    screenshot(page, "05-project-domains")

    visitor.goto(f"http://old.example.test:{port}/some/page")
    assert visitor.url == secure + "/some/page"
    expect(visitor.get_by_role("heading", name="Alice's shop")).to_be_visible()

    # The redirect is deleted again; then Remove from the menu next to the domain: a
    # warning and the offer of a redirect instead, then traffic stops at once.
    page.locator("table.redirects").get_by_role("link", name="Delete").click()
    expect(page.get_by_text("Delete the redirect from old.example.test")).to_be_visible()
    page.get_by_role("button", name="Delete").click()
    expect(page.get_by_text("The redirect was deleted.")).to_be_visible()
    assert_accessible(page)
    page.locator('tr[data-hostname="old.example.test"] summary').click()
    assert_accessible(page)  # with the row's menu open
    page.get_by_role("link", name="Remove").click()
    expect(page.get_by_text("Traffic to old.example.test stops at once.")).to_be_visible()
    expect(page.get_by_label("Redirect to")).to_have_value(
        str(shop.domains.get(hostname="shop.example.test").pk)
    )
    expect(page.get_by_role("button", name="Redirect instead")).to_be_visible()
    screenshot(page, "06-remove-confirm")
    page.get_by_role("button", name="Remove", exact=True).click()
    expect(page.get_by_text("old.example.test was removed")).to_be_visible()
    assert_accessible(page)

    response = visitor.goto(f"http://old.example.test:{port}/")
    assert response.status == 404
    assert "No project is published at old.example.test" in visitor.content()
    visitor.goto(f"http://shop.example.test:{port}/")
    expect(visitor.get_by_role("heading", name="Alice's shop")).to_be_visible()


def test_no_certificate_after_30_minutes_shows_the_steps_and_re_verify(
    shop, alice, dns_server, celery_worker, time_machine, live_dashboard, page, screenshot
):
    domain = domain_add(project=shop, hostname="www.example.test", actor=alice)
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    dns_server.add("example.test", "CAA", '0 issue "letsencrypt.org"')
    # Verified; the certificate request queued goes to the worker, whose CA meets the CAA.
    enqueue(domain_check(domain_id=domain.pk).next_steps)
    wait_for(
        lambda: Domain.objects.get(pk=domain.pk).cert_state == CertState.BLOCKED,
        what="the certificate request to be refused by CAA",
    )
    time_machine.move_to(timezone.now() + timedelta(minutes=31))

    sign_in(page, live_dashboard, "alice", PASSWORD)
    page.goto(live_dashboard.url + "/dashboard/projects/shop/domains/www.example.test/")
    steps = page.locator("#troubleshooting")
    expect(steps).to_contain_text("No certificate 30 minutes after verification.")
    expect(steps.locator("li").nth(0)).to_contain_text("yes")
    expect(steps.locator("li").nth(1)).to_contain_text("they block it")
    expect(steps.get_by_role("button", name="Re-verify")).to_be_visible()
    screenshot(page, "07-troubleshooting")


def test_two_owners_claim_one_name_and_the_txt_proof_decides(
    page, live_dashboard, dns_server, celery_worker, shop, bobs, bob, screenshot, settings
):
    """bob's project serves www.example.test on the CNAME alone; alice, who controls the
    DNS, adds it too, publishes her claim's TXT record and verifies: the name moves to her,
    and bob's page says he lost it."""
    settings.DOMAINS_VERIFY_COOLDOWN = 0
    dns_server.add("www.example.test", "CNAME", TARGET + ".")
    bobs_claim = domain_add(project=bobs, hostname="www.example.test", actor=bob)
    assert check(bobs_claim).is_live

    sign_in(page, live_dashboard, "alice", PASSWORD)
    page.get_by_role("link", name="Shop", exact=True).click()
    page.get_by_label("Domain or subdomain").fill("www.example.test")
    page.get_by_role("button", name="Add domain").click()
    records = page.locator("table.records")
    expect(records).to_contain_text("TXT")
    expect(records).to_contain_text("_petstore-verification.www")
    token = Domain.objects.get(project=shop, hostname="www.example.test").verification_token
    expect(records).to_contain_text(token)
    screenshot(page, "08-contested-txt")

    dns_server.add("_petstore-verification.www.example.test", "TXT", f'"{token}"')
    page.get_by_role("button", name="Verify", exact=True).click()
    expect(page.locator("h1 + .badge")).to_have_text("Active", timeout=30_000)
    assert_accessible(page)

    bobs_view = page.context.browser.new_context().new_page()
    sign_in(bobs_view, live_dashboard, "bob", PASSWORD)
    bobs_view.goto(
        live_dashboard.url + f"/dashboard/projects/{bobs.slug}/domains/www.example.test/"
    )
    expect(bobs_view.locator("h1 + .badge")).to_have_text("Taken by another project")
    expect(bobs_view.get_by_text("another project proved control of this name")).to_be_visible()
    expect(bobs_view.locator("#security table.events")).to_contain_text(
        "Lost the name to another project"
    )
    screenshot(bobs_view, "09-lost-to-a-proof")
