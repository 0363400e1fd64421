"""`manage.py check` warns when tenant pages would share a site with the dashboard."""

from __future__ import annotations

from domains.checks import dashboard_apart_from_tenants


def test_a_dashboard_under_the_tenants_registrable_domain_is_warned_about(settings):
    settings.PLATFORM_DOMAIN = "sites.petstore.example"
    settings.DASHBOARD_HOST = "app.petstore.example"
    [warning] = dashboard_apart_from_tenants(None)
    assert warning.id == "domains.W001"
    assert "petstore.example" in warning.msg


def test_a_tenant_domain_of_its_own_passes(settings):
    settings.PLATFORM_DOMAIN = "petstore-sites.example"
    settings.DASHBOARD_HOST = "app.petstore.example"
    assert dashboard_apart_from_tenants(None) == []
