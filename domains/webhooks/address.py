"""Where a webhook may go: the guard against server-side request forgery.

A tenant names the URL; the platform's workers make the request. So the URL must not let
a tenant reach what only the platform can: its loopback, its private network, the cloud's
metadata service (169.254.169.254), or the platform's own hosts. The host name is resolved
once, here, through the one DNS seam (A and AAAA); it is refused if ANY address it has is
not a public one, and the delivery connects to the addresses returned (client.py), so a
name that answers differently a second later (DNS rebinding) gains nothing.

Which addresses are public, and which are the platform's own, is the platform's one
address policy (domains/outbound.py), the same the domain doctor's name servers meet. A
host name the public DNS cannot resolve (a special-use name, a suffix outside the Public
Suffix List's ICANN section) is refused before it is resolved (domains/dns/hostnames.py):
only a private view could answer it. The URL may not hold whitespace or control characters
anywhere (a header or a request line split on a CR or LF), and only HTTPS_PORTS are reached
(never an SSH, a database's or a cache's port).

WEBHOOKS_ALLOW_LOOPBACK (default: DEBUG) lets a developer receive on their own machine:
`http` passes, and a loopback address on any port; which addresses pass is the policy's
(OUTBOUND_ALLOWED_NETWORKS), so private and link-local addresses never do.
"""

from __future__ import annotations

import ipaddress
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from domains import outbound
from domains.dns import hostnames, lookups

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

IPAddress = outbound.IPAddress
MAX_URL_LENGTH = 2000
INVALID = _("Enter a valid URL, such as https://example.com/hooks.")
# The ports a webhook may be delivered to (docs/decisions/webhooks.md): HTTPS's own and its
# usual alternative. Under WEBHOOKS_ALLOW_LOOPBACK a loopback address may use any port.
HTTPS_PORTS = frozenset({443, 8443})
PLATFORM = _("A webhook cannot point at this platform's own hosts.")


@dataclass(frozen=True)
class Target:
    """A URL that passed the guard, and the addresses it may be reached at."""

    url: str
    scheme: str
    host: str
    port: int
    path: str
    addresses: tuple[str, ...]


def refuse(message: StrOrPromise, code: str, **params: str | int) -> ValidationError:
    # Marked, with its values apart: read in the page's language (the API's is English).
    return ValidationError(message, code=code, params=params or None)


def check_url(url: str, *, lifetime: float | None = None) -> Target:
    """The target of `url`, or ValidationError with a code: webhook_url, webhook_scheme,
    webhook_port, webhook_unresolvable, webhook_address, webhook_platform. `lifetime`
    bounds the DNS wait (default DOMAINS_DNS_LIFETIME)."""
    url = url or ""
    # Checked before parsing: urlsplit drops a tab, CR or LF silently (WHATWG's rule),
    # so the URL stored would not be the URL checked.
    if any(char.isspace() or unicodedata.category(char) == "Cc" for char in url):
        raise refuse(_("A webhook URL cannot contain spaces or control characters."), "webhook_url")
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
        raise refuse(_("A webhook URL must start with https://."), "webhook_scheme")
    port = (443 if parts.scheme == "https" else 80) if port is None else port
    if port not in HTTPS_PORTS and not settings.WEBHOOKS_ALLOW_LOOPBACK:
        raise _refuse_port(port)
    if _is_platform_name(host):
        raise refuse(PLATFORM, "webhook_platform")
    if _literal(host) is None:
        hostnames.refuse_not_public(host)
    addresses, platform = _resolve(host, lifetime)
    refusals = {outbound.refusal(address, platform=platform): address for address in addresses}
    if outbound.NOT_PUBLIC in refusals:
        raise refuse(
            _(
                "%(host)s resolves to %(address)s, which is not a public address; webhooks go "
                "to public HTTPS endpoints only."
            ),
            "webhook_address",
            host=host,
            address=str(refusals[outbound.NOT_PUBLIC]),
        )
    if outbound.PLATFORM in refusals:
        raise refuse(PLATFORM, "webhook_platform")
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
    ports = str(_(" or ")).join(str(p) for p in sorted(HTTPS_PORTS))
    return refuse(
        _("A webhook URL's port must be %(ports)s (HTTPS), not %(port)d."),
        "webhook_port",
        ports=ports,
        port=port,
    )


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
    own = outbound.platform_names()
    names = [name for name in [host, *own] if _literal(name) is None]
    questions = [(name, rdtype) for name in dict.fromkeys(names) for rdtype in ("A", "AAAA")]
    answers = lookups.lookup_many(questions, lifetime=lifetime)
    found: dict[str, list[IPAddress]] = {}
    for (name, _rdtype), lookup in answers.items():
        found.setdefault(name, []).extend(ipaddress.ip_address(v) for v in lookup.final)
    for name in [host, *own]:
        literal = _literal(name)
        if literal is not None:
            found[name] = [literal]
    addresses = found.get(host, [])
    if not addresses and any(a.temporary for (name, _rdtype), a in answers.items() if name == host):
        raise refuse(
            _("%(host)s's name servers did not answer in time; check its DNS and try again."),
            "webhook_unresolvable",
            host=host,
        )
    if not addresses:
        raise refuse(
            _("%(host)s does not resolve to an address; check the name and its DNS records."),
            "webhook_unresolvable",
            host=host,
        )
    platform = outbound.platform_addresses(lambda name: map(str, found.get(name, [])))
    return addresses, platform
