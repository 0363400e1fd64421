"""System checks of the deployment settings (`manage.py check --deploy`)."""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.core.checks import Tags, register
from django.core.checks import Warning as CheckWarning

# Where a proxy in front of the app can sit: this host (loopback), a private network
# (RFC 1918, IPv6 unique local, carrier-grade NAT) or a link. A TRUSTED_PROXIES network that
# reaches outside these lets clients on the internet forge X-Forwarded-For and -Proto.
LOCAL_NETWORKS = [
    ipaddress.ip_network(network)
    for network in (
        "127.0.0.0/8",
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "169.254.0.0/16",
        "::1/128",
        "fc00::/7",
        "fe80::/10",
    )
]


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


def reaches_outside(network: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    """A network of more than one address that is not inside a local one (0.0.0.0/0, ::/0,
    a public range). One public address is allowed: an edge on another host may have one."""
    return network.num_addresses > 1 and not any(
        network.network_address in local and network.broadcast_address in local
        for local in LOCAL_NETWORKS
    )


@register(Tags.security, deploy=True)
def trusted_proxies(app_configs, **kwargs) -> list[CheckWarning]:
    """The app takes X-Forwarded-* only from TRUSTED_PROXIES. Empty while NUM_PROXIES counts
    proxies, the proxy is never believed (every client at its address, HTTPS unseen); a
    network reaching outside the local ones believes strangers."""
    if settings.NUM_PROXIES > 0 and not settings.TRUSTED_PROXIES:
        problem = (
            f"TRUSTED_PROXIES is empty but NUM_PROXIES is {settings.NUM_PROXIES}: no peer's "
            "X-Forwarded-For or X-Forwarded-Proto is believed, so every client counts at the "
            "proxy's address and HTTPS through it looks like plain HTTP."
        )
    elif broad := [str(n) for n in settings.TRUSTED_PROXIES if reaches_outside(n)]:
        problem = (
            f"TRUSTED_PROXIES includes {', '.join(broad)}, which reaches beyond loopback and "
            "private networks: a client there can forge X-Forwarded-For (escaping the sign-in "
            "and API limits) and X-Forwarded-Proto."
        )
    else:
        return []
    return [
        CheckWarning(
            problem,
            hint="Set TRUSTED_PROXIES to the addresses of the proxies in front of the app "
            "only: 127.0.0.1 when the edge runs on this host (the default), else the edge's "
            "private address or subnet; and bind the web processes where only they reach them.",
            id="petstore.W002",
        )
    ]
