"""The Content-Security-Policy holds in a real browser: every HTML page renders and
works with it, and Chromium reports no violation (an inline style or script the
policy blocks is reported, so a new one fails here)."""

from __future__ import annotations

import pytest

from domains.models import Domain
from domains.services.custom_domains import domain_add
from domains.services.projects import deploy_record, project_create
from petstore.http import csp
from tests.fixtures.browser import sign_in
from tests.fixtures.people import PASSWORD

pytestmark = pytest.mark.browser

# Listen for the browser's own report of each blocked resource or inline block.
WATCH_VIOLATIONS = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', e =>
  window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline') + ' ' + e.sample));
"""


def _violations(page) -> list[str]:
    return page.evaluate("window.__csp || []")


@pytest.fixture
def watched(page):
    console: list[str] = []
    page.on("console", lambda msg: console.append(msg.text))
    page.add_init_script(WATCH_VIOLATIONS)
    page.console_messages = console
    return page


def _assert_clean(page, url: str) -> None:
    blocked = _violations(page) + [
        m for m in page.console_messages if "Content Security Policy" in m
    ]
    assert blocked == [], f"{url}: {blocked}"


@pytest.fixture
def carol_with_domains(live_dashboard, carol):
    project = project_create(slug="shop", owner=carol, plan="pro", name="Shop")
    deploy_record(project=project, html="<h1>Shop</h1>")
    www = domain_add(project=project, hostname="www.example.test", actor=carol)
    domain_add(project=project, hostname="example.test", actor=carol)
    # A failed check shows the "fix the record" hints of the domain page.
    Domain.objects.filter(pk=www.pk).update(
        check_code="conflicting_record",
        check_message="An A record conflicts with the CNAME.",
        check_expected="CNAME domains.petstore.localhost",
        check_found="A 192.0.2.1",
    )
    return carol


def test_dashboard_and_admin_pages_render_under_the_policy(
    watched, live_dashboard, carol_with_domains
):
    page, base = watched, live_dashboard.url
    sign_in(page, live_dashboard, "carol", PASSWORD)
    for path in [
        "/admin/",
        "/admin/domains/domain/",
        "/admin/auth/user/add/",
        "/dashboard/",
        "/dashboard/projects/shop/domains/",
        "/dashboard/projects/shop/domains/www.example.test/",
        "/dashboard/projects/shop/domains/www.example.test/remove/",
        "/dashboard/projects/shop/redirects/add/",
        "/dashboard/settings/notifications/",
        "/dashboard/settings/account/",
        "/accounts/password_change/",
        "/accounts/password_change/done/",
    ]:
        response = page.goto(base + path)
        assert response.status == 200, path
        assert "script-src 'self'" in response.headers["content-security-policy"]
        page.wait_for_load_state("networkidle")
        _assert_clean(page, path)
    # The dashboard's own script still runs (it is 'self'): the Remove page's
    # redirect choice and the live status poll are wired by domains/static/domains/dashboard.js.
    page.goto(base + "/dashboard/projects/shop/domains/www.example.test/")
    assert page.evaluate("document.scripts.length") >= 1


def test_swagger_ui_renders_under_the_sites_policy_with_nothing_inline(watched, live_dashboard):
    page, base = watched, live_dashboard.url
    response = page.goto(base + "/v1/docs/")
    assert response.headers["content-security-policy"] == csp.DEFAULT_HEADER
    # Swagger UI builds the page from the OpenAPI document it fetched itself.
    page.get_by_text("Petstore API").first.wait_for()
    page.get_by_text("/pets/{petId}").first.wait_for()
    page.wait_for_load_state("networkidle")
    _assert_clean(page, "/v1/docs/")


def test_an_injected_inline_script_is_blocked(watched, live_dashboard):
    """The policy is not decoration: an inline script on our pages does not run."""
    page, base = watched, live_dashboard.url
    page.goto(base + "/accounts/login/")
    page.evaluate(
        "() => { const s = document.createElement('script');"
        " s.textContent = 'window.__ran = true'; document.body.appendChild(s); }"
    )
    assert page.evaluate("window.__ran === true") is False
    assert any("script-src" in v for v in _violations(page))
