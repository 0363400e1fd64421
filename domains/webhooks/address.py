"""Where a webhook may go: the guard against server-side request forgery.

A tenant names the URL; the platform's workers make the request. So the URL must not let
a tenant reach what only the platform can: its loopback, its private network, the cloud's
metadata service (169.254.169.254), or the platform's own hosts. The host name is resolved
once, here, through the one DNS seam (A and AAAA); it is refused if ANY address it has is
not a public one, and the delivery connects to the addresses returned (client.py), so a
name that answers differently a second later (DNS rebinding) gains nothing.

WEBHOOKS_ALLOW_LOOPBACK (default: DEBUG) lets a developer receive on their own machine:
`http` and loopback addresses pass; private and link-local addresses never do.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError

from domains.dns import lookups

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
MAX_URL_LENGTH = 2000
INVALID = "Enter a valid URL, such as https://example.com/hooks."


@dataclass(frozen=True)
class Target:
    """A URL that passed the guard, and the addresses it may be reached at."""

    url: str
    scheme: str
    host: str
    port: int
    path: str
    addresses: tuple[str, ...]


def refuse(message: str, code: str) -> ValidationError:
    return ValidationError(message, code=code)


def check_url(url: str) -> Target:
    """The target of `url`, or ValidationError with a code: webhook_url, webhook_scheme,
    webhook_unresolvable, webhook_address, webhook_platform."""
    url = (url or "").strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise refuse(INVALID, "webhook_url") from exc
    host = (parts.hostname or "").rstrip(".").lower()
    if not host or len(url) > MAX_URL_LENGTH or parts.username or parts.password:
        raise refuse(INVALID, "webhook_url")
    allowed = ("https", "http") if settings.WEBHOOKS_ALLOW_LOOPBACK else ("https",)
    if parts.scheme not in allowed:
        raise refuse("A webhook URL must start with https://.", "webhook_scheme")
    if _is_platform_name(host):
        raise refuse("A webhook cannot point at this platform's own hosts.", "webhook_platform")
    addresses, platform = _resolve(host)
    for address in addresses:
        _check_address(host, address)
    if any(address in platform for address in addresses):
        raise refuse("A webhook cannot point at this platform's own hosts.", "webhook_platform")
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    default_port = 443 if parts.scheme == "https" else 80
    return Target(
        url=url,
        scheme=parts.scheme,
        host=host,
        port=port or default_port,
        path=path,
        addresses=tuple(str(a) for a in addresses),
    )


def _is_platform_name(host: str) -> bool:
    own = {settings.PLATFORM_DOMAIN, settings.PLATFORM_CNAME_TARGET}
    if not settings.WEBHOOKS_ALLOW_LOOPBACK:  # under DEBUG the dashboard is `localhost`
        own.add(settings.DASHBOARD_HOST)
    return any(host == name or host.endswith(f".{name}") for name in own if name)


def _literal(name: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def _resolve(host: str) -> tuple[list[IPAddress], set[IPAddress]]:
    """The host's addresses, and the platform's own (the CNAME target tenants point at, the
    dashboard host): one round of questions, so an attempt waits for the DNS once."""
    own = sorted({settings.PLATFORM_CNAME_TARGET, settings.DASHBOARD_HOST} - {""})
    names = [name for name in [host, *own] if _literal(name) is None]
    questions = [(name, rdtype) for name in dict.fromkeys(names) for rdtype in ("A", "AAAA")]
    answers = lookups.lookup_many(questions)
    found: dict[str, list[IPAddress]] = {}
    for (name, _), lookup in answers.items():
        found.setdefault(name, []).extend(ipaddress.ip_address(v) for v in lookup.final)
    for name in [host, *own]:
        literal = _literal(name)
        if literal is not None:
            found[name] = [literal]
    addresses = found.get(host, [])
    if not addresses:
        raise refuse(
            f"{host} does not resolve to an address; check the name and its DNS records.",
            "webhook_unresolvable",
        )
    platform = {address for name in own for address in found.get(name, [])}
    # Loopback is the loopback rule's to decide (a developer's own machine under DEBUG).
    return addresses, {address for address in platform if not address.is_loopback}


def _check_address(host: str, address: IPAddress) -> None:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    if address.is_loopback and settings.WEBHOOKS_ALLOW_LOOPBACK:
        return
    # is_global is false for loopback, private, link-local, shared (100.64/10), multicast
    # (mostly), reserved and unspecified addresses: everything a tenant must not reach.
    if not address.is_global or address.is_multicast:
        raise refuse(
            f"{host} resolves to {address}, which is not a public address; "
            "webhooks go to public HTTPS endpoints only.",
            "webhook_address",
        )
