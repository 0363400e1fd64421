"""The dashboard by keyboard alone, in a real headless Chromium: Add domain → Verify → Remove
with nothing but Tab, Enter, Space and Escape, starting at the skip link; the focus kept where
the person had it when the status line reloads the page by itself; the ⋯ menus close on Escape
and on a click outside, and open without covering the next row."""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from domains.models import Domain
from domains.services.custom_domains import domain_add
from tests.fixtures.accessibility import assert_accessible, assert_reviewed_rules_hold
from tests.fixtures.browser import sign_in
from tests.fixtures.domains import TARGET
from tests.fixtures.people import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The focused element, as "tag: its accessible text" (a field by its name).
FOCUSED = """() => {
  const e = document.activeElement;
  if (!e || e === document.body) return "body";
  const text = (e.getAttribute("aria-label") || e.textContent || e.name || "").trim();
  return e.tagName.toLowerCase() + ": " + text.replace(/\\s+/g, " ");
}"""


def focused(page) -> str:
    return page.evaluate(FOCUSED)


def tab_to(page, wanted: str, *, within: int) -> int:
    """Press Tab until the focus is on `wanted` (as FOCUSED says it); how many presses."""
    for presses in range(1, within + 1):
        page.keyboard.press("Tab")
        if focused(page) == wanted:
            return presses
    raise AssertionError(
        f"{wanted!r} not reached in {within} Tabs; the focus is on {focused(page)!r}"
    )


def skip_to_content(page) -> None:
    page.keyboard.press("Tab")
    assert focused(page) == "a: Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "content"


def test_add_verify_and_remove_a_domain_by_keyboard_alone(
    page, live_dashboard, dns_server, celery_worker, shop, settings
):
    settings.DOMAINS_VERIFY_COOLDOWN = 0
    dns_server.add("shop.example.test", "CNAME", TARGET + ".")
    sign_in(page, live_dashboard, "alice", PASSWORD)
    page.goto(live_dashboard.url + "/dashboard/projects/shop/domains/")

    # Add domain: past the top bar in one step, then a few Tabs to the field.
    skip_to_content(page)
    tab_to(page, "input: hostname", within=6)
    page.keyboard.type("shop.example.test")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="shop.example.test")).to_be_visible()
    # The page says what happened, and the focus is on that message, not lost at the top.
    assert page.evaluate("document.activeElement.classList.contains('messages')")
    assert_accessible(page)
    assert_reviewed_rules_hold(page)  # the flash messages' live region among them

    # Verify: the next control after the message.
    tab_to(page, "button: Verify", within=1)
    page.keyboard.press("Space")
    expect(page.locator("h1 + .badge")).not_to_have_text("Pending", timeout=30_000)
    assert focused(page) != "body"

    # Remove, from the ⋯ menu: Escape closes it and gives the focus back to its button.
    tab_to(page, "summary: More actions", within=6)
    page.keyboard.press("Enter")
    menu = page.locator("details.menu")
    expect(menu).to_have_attribute("open", "")
    page.keyboard.press("Escape")
    expect(menu).not_to_have_attribute("open", "")
    assert focused(page) == "summary: More actions"
    page.keyboard.press("Enter")
    tab_to(page, "a: Remove", within=2)
    page.keyboard.press("Enter")
    expect(page.get_by_text("Traffic to shop.example.test stops at once.")).to_be_visible()
    assert_accessible(page)

    skip_to_content(page)
    tab_to(page, "button: Remove", within=4)
    page.keyboard.press("Enter")
    expect(page.get_by_text("shop.example.test was removed")).to_be_visible()
    assert not shop.domains.filter(hostname="shop.example.test").exists()


def test_the_focus_stays_put_when_the_status_reloads_the_page(page, live_dashboard, shop, alice):
    www = domain_add(project=shop, hostname="www.example.test", actor=alice)
    sign_in(page, live_dashboard, "alice", PASSWORD)
    page.goto(live_dashboard.url + "/dashboard/projects/shop/domains/www.example.test/")
    skip_to_content(page)
    tab_to(page, "a: Notification settings", within=12)

    # A check finishes: the status poll sees the change and the page follows it.
    Domain.objects.filter(pk=www.pk).update(
        check_code="no_record",
        check_message="www.example.test has no CNAME record yet.",
        checked_at=timezone.now(),
    )
    expect(page.locator("#check-failure")).to_contain_text("has no CNAME record yet")
    assert focused(page) == "a: Notification settings"
    # The new status is read out, from a live region filled after the reload.
    expect(page.locator("#status-announce")).to_contain_text("Pending")
    assert page.locator("#status-announce").get_attribute("aria-live") == "polite"


def test_a_rows_menu_opens_below_it_without_covering_the_next_and_closes_outside(
    page, live_dashboard, shop, alice
):
    for hostname in ("a.example.test", "b.example.test"):
        domain_add(project=shop, hostname=hostname, actor=alice)
    sign_in(page, live_dashboard, "alice", PASSWORD)
    page.goto(live_dashboard.url + "/dashboard/projects/shop/domains/")
    first = page.locator('tr[data-hostname="a.example.test"] details.menu')
    second = page.locator('tr[data-hostname="b.example.test"] summary')
    first.locator("summary").click()
    expect(first).to_have_attribute("open", "")
    # What a click on the next row's ⋯ would reach is that button, not the open menu.
    box = second.bounding_box()
    assert box is not None
    hit = page.evaluate(
        "([x, y]) => document.elementFromPoint(x, y).closest('tr').dataset.hostname",
        [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2],
    )
    assert hit == "b.example.test"
    assert_accessible(page)

    page.get_by_role("heading", name="Domains", exact=True).click()
    expect(first).not_to_have_attribute("open", "")
