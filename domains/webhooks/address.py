"""Where a webhook may go: the guard against server-side request forgery.

A tenant names the URL; the platform's workers make the request. So the URL must not let
a tenant reach what only the platform can: its loopback, its private network, the cloud's
metadata service (169.254.169.254), or the platform's own hosts. The host name is resolved
once, here, through the one DNS seam (A and AAAA); it is refused if ANY address it has is
not a public one, and the delivery connects to the addresses returned (client.py), so a
name that answers differently a second later (DNS rebinding) gains nothing.

An IPv6 address that wraps an IPv4 one (NAT64, 6to4, Teredo, IPv4-compatible, -mapped,
SIIT) is judged by the IPv4 address it wraps, since that is where a translator or a relay
delivers it; site-local and local-use NAT64 are refused outright. The URL may not hold
whitespace or control characters anywhere (a header or a request line split on a CR or LF),
and only HTTPS_PORTS are reached (never an SSH, a database's or a cache's port).

WEBHOOKS_ALLOW_LOOPBACK (default: DEBUG) lets a developer receive on their own machine:
`http` and loopback addresses, on any port, pass; private and link-local addresses never do.
"""

from __future__ import annotations

import ipaddress
import unicodedata
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError

from domains.dns import hostnames, lookups

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
MAX_URL_LENGTH = 2000
INVALID = "Enter a valid URL, such as https://example.com/hooks."
# The ports a webhook may be delivered to (docs/decisions/webhooks.md): HTTPS's own and its
# usual alternative. Under WEBHOOKS_ALLOW_LOOPBACK a loopback address may use any port.
HTTPS_PORTS = frozenset({443, 8443})
# IPv6 prefixes whose last 32 bits are an IPv4 address a translator reaches: NAT64's
# well-known prefix (RFC 6052), IPv4-compatible (::a.b.c.d, deprecated) and SIIT
# (::ffff:0:a.b.c.d, RFC 2765). IPv4-mapped, 6to4 and Teredo have ipaddress's own readers.
WRAPPING_96 = (
    ipaddress.IPv6Network("64:ff9b::/96"),
    ipaddress.IPv6Network("::/96"),
    ipaddress.IPv6Network("::ffff:0:0:0/96"),
)
# Refused whatever they hold: NAT64 for local use (RFC 8215; where its IPv4 address sits
# depends on the operator's prefix length) and site-local (deprecated, private in effect).
REFUSED_V6 = (ipaddress.IPv6Network("64:ff9b:1::/48"), ipaddress.IPv6Network("fec0::/10"))


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


def check_url(url: str, *, lifetime: float | None = None) -> Target:
    """The target of `url`, or ValidationError with a code: webhook_url, webhook_scheme,
    webhook_port, webhook_unresolvable, webhook_address, webhook_platform. `lifetime`
    bounds the DNS wait (default DOMAINS_DNS_LIFETIME)."""
    url = url or ""
    # Checked before parsing: urlsplit drops a tab, CR or LF silently (WHATWG's rule),
    # so the URL stored would not be the URL checked.
    if any(char.isspace() or unicodedata.category(char) == "Cc" for char in url):
        raise refuse("A webhook URL cannot contain spaces or control characters.", "webhook_url")
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
    port = (443 if parts.scheme == "https" else 80) if port is None else port
    if port not in HTTPS_PORTS and not settings.WEBHOOKS_ALLOW_LOOPBACK:
        raise _refuse_port(port)
    if _is_platform_name(host):
        raise refuse("A webhook cannot point at this platform's own hosts.", "webhook_platform")
    addresses, platform = _resolve(host, lifetime)
    for address in addresses:
        _check_address(host, address)
    if any(address in platform for address in addresses):
        raise refuse("A webhook cannot point at this platform's own hosts.", "webhook_platform")
    if port not in HTTPS_PORTS and not (port > 0 and all(a.is_loopback for a in addresses)):
        raise _refuse_port(port)
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    return Target(
        url=url,
        scheme=parts.scheme,
        host=host,
        port=port,
        path=path,
        addresses=tuple(str(a) for a in addresses),
    )


def host_of(url: str) -> str:
    """The URL's host name as the guard compares it (the in-flight caps count by it)."""
    try:
        return (urlsplit(url).hostname or "").rstrip(".").lower()
    except ValueError:
        return ""


def _refuse_port(port: int) -> ValidationError:
    ports = " or ".join(str(p) for p in sorted(HTTPS_PORTS))
    return refuse(f"A webhook URL's port must be {ports} (HTTPS), not {port}.", "webhook_port")


def _is_platform_name(host: str) -> bool:
    hosts = hostnames.platform_hosts()
    own = {hosts.site, hosts.cname_target}
    if not settings.WEBHOOKS_ALLOW_LOOPBACK:  # under DEBUG the dashboard is `localhost`
        own.add(hosts.dashboard)
    return any(host == name or host.endswith(f".{name}") for name in own if name)


def _literal(name: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def _resolve(host: str, lifetime: float | None) -> tuple[list[IPAddress], set[IPAddress]]:
    """The host's addresses, and the platform's own (the CNAME target tenants point at, the
    dashboard host): one round of questions, so an attempt waits for the DNS once."""
    hosts = hostnames.platform_hosts()
    own = sorted({hosts.cname_target, hosts.dashboard} - {""})
    names = [name for name in [host, *own] if _literal(name) is None]
    questions = [(name, rdtype) for name in dict.fromkeys(names) for rdtype in ("A", "AAAA")]
    answers = lookups.lookup_many(questions, lifetime=lifetime)
    found: dict[str, list[IPAddress]] = {}
    for (name, _), lookup in answers.items():
        found.setdefault(name, []).extend(ipaddress.ip_address(v) for v in lookup.final)
    for name in [host, *own]:
        literal = _literal(name)
        if literal is not None:
            found[name] = [literal]
    addresses = found.get(host, [])
    if not addresses and any(a.temporary for (name, _), a in answers.items() if name == host):
        raise refuse(
            f"{host}'s name servers did not answer in time; check its DNS and try again.",
            "webhook_unresolvable",
        )
    if not addresses:
        raise refuse(
            f"{host} does not resolve to an address; check the name and its DNS records.",
            "webhook_unresolvable",
        )
    platform = {address for name in own for address in found.get(name, [])}
    # Loopback is the loopback rule's to decide (a developer's own machine under DEBUG).
    return addresses, {address for address in platform if not address.is_loopback}


def _wrapped(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address delivers to, where it wraps any."""
    if address.ipv4_mapped:
        return [address.ipv4_mapped]
    if address.sixtofour:
        return [address.sixtofour]
    if address.teredo:
        return list(address.teredo)  # the relay's server and the client behind it
    if any(address in net for net in WRAPPING_96) and int(address) > 1:  # not :: nor ::1
        return [ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)]
    return []


def _is_public(address: IPAddress) -> bool:
    # is_global is false for loopback, private, link-local, shared (100.64/10), multicast
    # (mostly), reserved and unspecified addresses: everything a tenant must not reach.
    return address.is_global and not address.is_multicast


def _check_address(host: str, address: IPAddress) -> None:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped  # the same socket address as the IPv4 one
    if address.is_loopback and settings.WEBHOOKS_ALLOW_LOOPBACK:
        return
    wrapped: list[IPAddress] = []
    refused_v6 = False
    if isinstance(address, ipaddress.IPv6Address):
        wrapped = list(_wrapped(address))
        refused_v6 = any(address in net for net in REFUSED_V6)
    # A wrapper of a public IPv4 address is as public as that address (some are "reserved"
    # to ipaddress, which is about the IPv6 block, not where it leads).
    public = all(_is_public(a) for a in wrapped) if wrapped else _is_public(address)
    if refused_v6 or not public:
        raise refuse(
            f"{host} resolves to {address}, which is not a public address; "
            "webhooks go to public HTTPS endpoints only.",
            "webhook_address",
        )
