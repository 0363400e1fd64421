"""Where the platform may connect on a tenant's say: one address policy for every such path.

A tenant names places that the platform's workers then reach: a webhook's URL
(domains/webhooks/address.py, then client.py) and the name servers of the zone the domain
doctor asks directly (domains/dns/doctor.py, asked through domains/dns/lookups.py, which
refuses again at the socket). An address a tenant names must not let them reach what only
the platform can, nor learn what answers there: its loopback, its private network, the
cloud's metadata service (169.254.169.254, fd00:ec2::254), shared address space, multicast,
or the platform's own hosts. Whatever connects somewhere on a tenant's say asks `refusal()`
first; nothing else decides it.

An IPv6 address that wraps an IPv4 one (NAT64, 6to4, Teredo, IPv4-compatible, -mapped,
SIIT) is judged by the IPv4 address it wraps, since that is where a translator or a relay
delivers it; site-local and local-use NAT64 are refused outright.

OUTBOUND_ALLOWED_NETWORKS (default: the loopback ranges under DEBUG, none otherwise) lists
the networks allowed although they are not public: a developer's own machine, where `make
run`'s DNS servers and webhook receivers listen. The exception is a setting, read here, and
nowhere a code path of its own. Its limits are in docs/decisions/security.md.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Collection, Iterable

from django.conf import settings

from domains.dns import hostnames

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# What `refusal()` answers: the address may be reached (ALLOWED), it is not a public one
# (NOT_PUBLIC), or it is one of the platform's own (PLATFORM).
ALLOWED = ""
NOT_PUBLIC = "not_public"
PLATFORM = "platform"

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


def address(value: str | IPAddress) -> IPAddress | None:
    """`value` as an address (an IPv4-mapped IPv6 one as the IPv4 address it is on the
    socket), or None when it is none."""
    if isinstance(value, str):
        try:
            value = ipaddress.ip_address(value)
        except ValueError:
            return None
    if isinstance(value, ipaddress.IPv6Address) and value.ipv4_mapped:
        return value.ipv4_mapped
    return value


def refusal(value: str | IPAddress, *, platform: Collection[IPAddress] = ()) -> str:
    """Why the platform may not connect to `value` on a tenant's say: NOT_PUBLIC, PLATFORM
    (one of `platform`, the platform's own addresses: `platform_addresses()`), or ALLOWED."""
    found = address(value)
    if found is None:
        return NOT_PUBLIC
    if any(found in network for network in settings.OUTBOUND_ALLOWED_NETWORKS):
        return ALLOWED
    if found in {address(own) for own in platform}:
        return PLATFORM
    wrapped: list[IPAddress] = []
    if isinstance(found, ipaddress.IPv6Address):
        if any(found in network for network in REFUSED_V6):
            return NOT_PUBLIC
        wrapped = list(_wrapped(found))
    # A wrapper of a public IPv4 address is as public as that address (some are "reserved"
    # to ipaddress, which is about the IPv6 block, not where it leads).
    public = all(_is_public(a) for a in wrapped) if wrapped else _is_public(found)
    return ALLOWED if public else NOT_PUBLIC


def platform_names() -> list[str]:
    """The platform's own hosts whose addresses no tenant may send the platform to: the
    CNAME target tenants point at and the dashboard's host (IP literals included)."""
    own = hostnames.platform_hosts()
    return sorted({own.cname_target, own.dashboard} - {""})


def platform_addresses(resolved: Callable[[str], Iterable[str]]) -> set[IPAddress]:
    """The platform's own addresses, given what each of `platform_names()` resolved to
    (`resolved(name)`, its A and AAAA values; a literal is its own address). One inside
    OUTBOUND_ALLOWED_NETWORKS is the setting's to decide, not this rule's."""
    found: set[IPAddress] = set()
    for name in platform_names():
        literal = address(name)
        values = [literal] if literal is not None else [address(v) for v in resolved(name)]
        found |= {value for value in values if value is not None}
    return {
        value
        for value in found
        if not any(value in network for network in settings.OUTBOUND_ALLOWED_NETWORKS)
    }


def _wrapped(found: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address delivers to, where it wraps any."""
    if found.sixtofour:
        return [found.sixtofour]
    if found.teredo:
        return list(found.teredo)  # the relay's server and the client behind it
    if any(found in network for network in WRAPPING_96) and int(found) > 1:  # not :: nor ::1
        return [ipaddress.IPv4Address(int(found) & 0xFFFFFFFF)]
    return []


def _is_public(found: IPAddress) -> bool:
    # is_global is false for loopback, private, link-local, shared (100.64/10), multicast
    # (mostly), reserved and unspecified addresses: everything a tenant must not reach.
    return found.is_global and not found.is_multicast
