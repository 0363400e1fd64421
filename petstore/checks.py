"""System checks of the deployment settings (`manage.py check --deploy`)."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Tags, register
from django.core.checks import Warning as CheckWarning


@register(Tags.security, deploy=True)
def proxy_count(app_configs, **kwargs) -> list[CheckWarning]:
    """SECURE_PROXY_SSL_HEADER trusts a proxy's X-Forwarded-Proto; with NUM_PROXIES=0 the
    client address ignores that same proxy's X-Forwarded-For, and every client shares its
    address, its sign-in limit and its API rate limit."""
    if settings.SECURE_PROXY_SSL_HEADER and settings.NUM_PROXIES == 0:
        return [
            CheckWarning(
                "SECURE_PROXY_SSL_HEADER trusts a proxy, but NUM_PROXIES is 0: every client "
                "would be counted at the proxy's address.",
                hint="Set NUM_PROXIES to the number of proxies in front of the app "
                "(1 behind one load balancer).",
                id="petstore.W001",
            )
        ]
    return []
