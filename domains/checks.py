"""Django system checks of the custom-domains settings (`manage.py check`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Warning, register

from domains.dns.hostnames import comparable, registrable_domain


@register()
def dashboard_apart_from_tenants(
    app_configs: Sequence[AppConfig] | None, **kwargs: Any
) -> Sequence[CheckMessage]:
    """Tenant pages at <slug>.PLATFORM_DOMAIN must not share a site with the dashboard: a
    page on a sibling host could set cookies for the shared parent (cookie tossing)."""
    dashboard = comparable(settings.DASHBOARD_HOST)
    platform = comparable(settings.PLATFORM_DOMAIN)
    if dashboard and registrable_domain(dashboard) == registrable_domain(platform):
        return [
            Warning(
                f"DASHBOARD_HOST ({dashboard}) and PLATFORM_DOMAIN ({platform}) share the "
                f"registrable domain {registrable_domain(platform)}: tenant pages could set "
                "cookies the dashboard reads.",
                hint=(
                    "Serve tenant pages from a registrable domain of their own (one on the "
                    "Public Suffix List, as github.io and vercel.app are)."
                ),
                id="domains.W001",
            )
        ]
    return []
