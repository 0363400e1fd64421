"""Host name rules: IDNA, lengths, public suffixes, the platform's own names.

A name is normalised one of two ways, by where it comes from:
- `normalize_hostname()`: what a person typed (Add domain, a staff command) becomes the
  ASCII (IDNA) form we store, or is refused with a ValidationError saying what to change.
- `comparable()`: a name that is only matched against stored ones (a Host header, a TLS
  handshake's SNI, a DNS answer, a setting, a dashboard URL) is folded to the stored
  form's case and ends; nothing is refused, a name that is not valid matches nothing.

A name the public DNS cannot resolve (a special-use name, a suffix outside the Public Suffix
List's ICANN section) is refused wherever a tenant names one (`refuse_not_public`: Add
domain, a webhook's host, the name servers the domain doctor would ask), since only the
platform's own resolver could answer it, from a private view it must not lend out.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import idna
from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from publicsuffixlist import PublicSuffixList

from domains.choices import NAME_REFUSALS, SPECIAL_USE_SUFFIXES, NameCode

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

# The TXT record that proves control of a contested name: _petstore-verification.<name>.
# Its leading underscore keeps it apart from any name a project could claim.
OWNERSHIP_TXT_LABEL = "_petstore-verification"
# The longest name DNS can carry (255 octets on the wire, 253 characters as text).
DNS_NAME_MAX = 253
# The longest name a project may add: its ownership TXT name must still be a DNS name,
# or the TXT record that proves control of it could never be created, nor asked for.
MAX_HOSTNAME_LENGTH = DNS_NAME_MAX - len(OWNERSHIP_TXT_LABEL + ".")
TOO_LONG_MESSAGE = format_lazy(
    _(
        "A domain name can be at most {longest} characters long here: its verification "
        "record {label}.<name> must fit in DNS's {dns_max} characters."
    ),
    longest=MAX_HOSTNAME_LENGTH,
    label=OWNERSHIP_TXT_LABEL,
    dns_max=DNS_NAME_MAX,
)
_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")


@lru_cache(maxsize=1)
def _psl() -> PublicSuffixList:
    # The list bundled with the pinned `publicsuffixlist` package; never downloaded.
    return PublicSuffixList()


@lru_cache(maxsize=1)
def _icann() -> PublicSuffixList:
    # The ICANN section alone: the top-level domains the public DNS delegates (the private
    # section's names all sit under one of them).
    return PublicSuffixList(only_icann=True)


def _refuse(message: StrOrPromise, code: str, **params: str | int) -> ValidationError:
    # Marked, with its values apart: read in the page's language (the API's is English).
    return ValidationError(message, code=code, params=params or None)


def comparable(name: str) -> str:
    """`name` as stored names are compared: without surrounding spaces, in lower case,
    without the trailing dot of a fully qualified name."""
    return name.strip().lower().rstrip(".")


WILDCARD_PREFIX = "*."
WILDCARD_SHAPE_MESSAGE = _("A wildcard is a leading *. only, for example *.shop.example.com.")
# Where the CA looks for the DNS-01 TXT record of a name (RFC 8555 §8.4).
ACME_CHALLENGE_LABEL = "_acme-challenge"


def is_wildcard(ascii_name: str) -> bool:
    return ascii_name.startswith(WILDCARD_PREFIX)


def wildcard_base(ascii_name: str) -> str:
    """The name a wildcard stands under: shop.example.com for *.shop.example.com."""
    return ascii_name.removeprefix(WILDCARD_PREFIX)


def acme_challenge_name(ascii_name: str) -> str:
    """The name whose TXT record proves `ascii_name` to a CA over DNS-01; a wildcard's is its
    base's (RFC 8555 §8.4)."""
    return f"{ACME_CHALLENGE_LABEL}.{wildcard_base(ascii_name)}"


def covering_wildcard(hostname: str) -> str | None:
    """The wildcard name that covers `hostname` (a comparable name): `*.` and its parent, for
    one label only (RFC 6125 §6.4.3), never a wildcard over a single label (`*.com`), nor a
    wildcard over a wildcard. None: no wildcard covers it."""
    label, dot, parent = hostname.partition(".")
    if not dot or not label or label == "*" or "." not in parent:
        return None
    return f"*.{parent}"


def normalize_hostname(raw: str, *, wildcard: bool = False) -> str:
    """Return the ASCII form of a custom host name, or raise ValidationError. With
    `wildcard` (a project whose plan may have one), a leading `*.` before a name that passes
    every rule is a wildcard domain; a `*` anywhere else is refused."""
    # One trailing dot is the same name; anything else is for the checks below to refuse.
    value = (raw or "").strip().lower().removesuffix(".")
    if wildcard and value.startswith(WILDCARD_PREFIX):
        base = value.removeprefix(WILDCARD_PREFIX)
        if "*" in base:
            raise _refuse(WILDCARD_SHAPE_MESSAGE, "wildcard")
        return WILDCARD_PREFIX + normalize_hostname(base)
    if not value:
        raise _refuse(_("Enter a domain name, for example shop.example.com."), "required")
    if "://" in value or "/" in value or "@" in value or " " in value:
        raise _refuse(
            _(
                "Enter only the domain name, without a scheme, path or spaces "
                "(for example shop.example.com)."
            ),
            "invalid_hostname",
        )
    if "*" in value:
        raise _refuse(
            WILDCARD_SHAPE_MESSAGE
            if wildcard
            else _("Wildcard domains are not supported; add each name separately."),
            "wildcard",
        )
    if _is_ip_literal(value):
        raise _refuse(_("Enter a domain name, not an IP address."), "ip_literal")
    if ":" in value:
        raise _refuse(_("Enter the domain name without a port."), "invalid_hostname")
    try:
        ascii_name = idna.encode(value, uts46=True).decode("ascii")
    except idna.IDNAError as exc:
        if len(value) > MAX_HOSTNAME_LENGTH:
            raise _refuse(TOO_LONG_MESSAGE, "too_long") from None
        if any(len(label) > 63 for label in value.split(".")):
            raise _refuse(
                _("Each part of a domain name can be at most 63 characters long."),
                "label_too_long",
            ) from None
        # IDNA's own words (which rule the name breaks) are quoted as the library gives them.
        raise _refuse(
            _("%(name)s is not a valid domain name (%(reason)s)."),
            "invalid_hostname",
            name=repr(raw),
            reason=str(exc),
        ) from None
    if len(ascii_name) > MAX_HOSTNAME_LENGTH:
        raise _refuse(TOO_LONG_MESSAGE, "too_long")
    labels = ascii_name.split(".")
    if len(labels) < 2:
        raise _refuse(
            _("Enter a full domain name with a dot, for example example.com."), "invalid_hostname"
        )
    for label in labels:
        if len(label) > 63:
            raise _refuse(
                _("The part %(label)s is longer than 63 characters."),
                "label_too_long",
                label=repr(label),
            )
        if not _LABEL.match(label):
            raise _refuse(
                _("The part %(label)s may only hold letters, digits and inner hyphens."),
                "invalid_hostname",
                label=repr(label),
            )
    platform = comparable(settings.PLATFORM_DOMAIN)
    if ascii_name == platform or ascii_name.endswith("." + platform):
        raise _refuse(
            _(
                "Names under %(platform)s belong to the platform; your project is already "
                "published at its own %(platform)s subdomain."
            ),
            "platform_domain",
            platform=platform,
        )
    if any(ascii_name == own or ascii_name.endswith("." + own) for own in platform_hostnames()):
        raise _refuse(
            _("%(name)s is one of the platform's own names and cannot be attached to a project."),
            "platform_domain",
            name=to_unicode(ascii_name),
        )
    refuse_not_public(ascii_name)
    if _psl().is_public(ascii_name) or _psl().privatesuffix(ascii_name) is None:
        raise _refuse(
            _(
                "%(name)s is a public suffix: people register domains under it, it cannot be "
                "one. Enter your own domain, for example example.%(name)s."
            ),
            "public_suffix",
            name=to_unicode(ascii_name),
        )
    return ascii_name


def not_public(name: str) -> tuple[str, str] | None:
    """(NameCode, suffix) when the public DNS cannot resolve `name` (ASCII, as `comparable()`
    leaves it): it ends in a special-use suffix, or its top-level domain is not in the Public
    Suffix List's ICANN section. None when it can, or when it ends in one of
    DOMAINS_LOCAL_SUFFIXES (a zone the platform serves itself, `.test` in development)."""
    labels = name.split(".")
    suffixes = [".".join(labels[i:]) for i in range(len(labels))]  # longest first
    local = {comparable(suffix).lstrip(".") for suffix in settings.DOMAINS_LOCAL_SUFFIXES}
    if local.intersection(suffixes):
        return None
    special = next((suffix for suffix in suffixes if suffix in SPECIAL_USE_SUFFIXES), None)
    if special is not None:
        return NameCode.SPECIAL_USE, special
    if _icann().publicsuffix(name, accept_unknown=False) is None:
        return NameCode.NOT_PUBLIC, labels[-1]
    return None


def is_public_name(name: str) -> bool:
    """Whether the public DNS can resolve `name` (any form: it is made comparable here)."""
    return not_public(_ascii(comparable(name))) is None


def refuse_not_public(name: str) -> None:
    """Raise ValidationError (a NameCode, and its sentence) when the public DNS cannot
    resolve `name`: see `not_public`."""
    ascii_name = _ascii(comparable(name))
    found = not_public(ascii_name)
    if found is not None:
        code, suffix = found
        sentence = NAME_REFUSALS[code].format(
            name=to_unicode(ascii_name), suffix=suffix, use=SPECIAL_USE_SUFFIXES.get(suffix, "")
        )
        raise _refuse(sentence, code)


@lru_cache(maxsize=4096)
def _ascii(name: str) -> str:
    """`name` in its ASCII (IDNA) form where it has one, else as it is. Kept for the names
    asked again and again (the doctor reads the same few name servers' names for every
    domain of a batch: IDNA's checks cost more than the rest of the decision)."""
    try:
        return idna.encode(name, uts46=True).decode("ascii")
    except idna.IDNAError:
        return name


@dataclass(frozen=True)
class PlatformHosts:
    """The platform's own host names, each as `comparable()` makes it ("" when unset).

    Each question picks the names it is about, by what they are: which hosts the Django
    site answers (domains/routing/middleware.py), which names no project may claim
    (`platform_hostnames`, `platform_registrable_domains`), and where no webhook may be
    sent (domains/webhooks/address.py)."""

    # PLATFORM_DOMAIN: every project is published at <slug>.<site>.
    site: str
    # PLATFORM_CNAME_TARGET: what custom domains point at.
    cname_target: str
    # DASHBOARD_HOST.
    dashboard: str
    # The host of API_BASE_URL.
    api: str
    # DOMAINS_CA_IDENTIFIER: the local CA's name.
    ca: str
    # ALLOWED_HOSTS but "*"; an entry `.example.com` stands for example.com and the names
    # under it.
    allowed: tuple[str, ...]


def platform_hosts() -> PlatformHosts:
    """The platform's own host names, read from the settings when called: the one place
    that lists them. The middleware asks on every request, so the names are worked out
    once per combination of settings (a test's override is a new combination)."""
    return _platform_hosts(
        settings.PLATFORM_DOMAIN,
        settings.PLATFORM_CNAME_TARGET,
        settings.DASHBOARD_HOST,
        settings.API_BASE_URL,
        settings.DOMAINS_CA_IDENTIFIER,
        tuple(settings.ALLOWED_HOSTS),
    )


@lru_cache(maxsize=8)
def _platform_hosts(
    site: str, cname_target: str, dashboard: str, api_url: str, ca: str, allowed: tuple[str, ...]
) -> PlatformHosts:
    hosts = (comparable(host) for host in allowed)
    return PlatformHosts(
        site=comparable(site),
        cname_target=comparable(cname_target),
        dashboard=comparable(dashboard),
        api=comparable(urlsplit(api_url).hostname or ""),
        ca=comparable(ca),
        allowed=tuple(host for host in hosts if host != "*"),
    )


def platform_hostnames() -> set[str]:
    """The names the platform itself answers on: its hosts (ALLOWED_HOSTS, the dashboard's,
    the API's), the CNAME target and the CA's identifier. None of them, nor any name under
    them, may be claimed by a project."""
    own = platform_hosts()
    names = {own.site, own.cname_target, own.ca, own.dashboard, own.api, *own.allowed}
    cleaned = {name.lstrip(".") for name in names}
    return {name for name in cleaned if name and name != "*" and not _is_ip_literal(name)}


def platform_registrable_domains() -> set[str]:
    """The registrable domains of the platform's own hosts: the dashboard's, the API's, the
    CNAME target's and PLATFORM_DOMAIN's. A sibling of the dashboard (or the apex above it)
    shares its cookies' site and its users' trust, so none of these, nor any name under
    them, may be claimed by a project."""
    own = platform_hosts()
    names = {own.dashboard, own.api, own.cname_target, own.site}
    return {registrable_domain(name) for name in names if name and not _is_ip_literal(name)}


def refuse_platform_registrable(ascii_name: str) -> None:
    """Raise ValidationError when `ascii_name` is in a registrable domain of the platform's
    own (platform_registrable_domains)."""
    for own in platform_registrable_domains():
        if ascii_name == own or ascii_name.endswith("." + own):
            raise _refuse(
                _(
                    "%(name)s is under %(own)s, the platform's own domain (its dashboard, API "
                    "and DNS target live there); no name under it can be attached to a project."
                ),
                "platform_domain",
                name=to_unicode(ascii_name),
                own=to_unicode(own),
            )


def ownership_txt_name(ascii_name: str) -> str:
    return f"{OWNERSHIP_TXT_LABEL}.{ascii_name}"


def registrable_domain(ascii_name: str) -> str:
    """The name a registrant holds: example.co.uk for shop.example.co.uk."""
    return _psl().privatesuffix(ascii_name) or ascii_name


def _is_ip_literal(value: str) -> bool:
    candidate = value.strip("[]")
    try:
        ipaddress.ip_address(candidate)
    except ValueError:
        return False
    return True


def is_apex(ascii_name: str) -> bool:
    """An apex is the registrable domain itself: `example.co.uk`, not `shop.example.co.uk`
    (nor `*.example.co.uk`)."""
    return not is_wildcard(ascii_name) and _psl().privatesuffix(ascii_name) == ascii_name


def to_unicode(ascii_name: str) -> str:
    try:
        return idna.decode(ascii_name)
    except idna.IDNAError:
        return ascii_name


def subdomain_label(ascii_name: str) -> str:
    """The record name to enter at the DNS provider: `shop` for shop.example.com, `@` at an apex."""
    apex = _psl().privatesuffix(ascii_name)
    if not apex or apex == ascii_name:
        return "@"
    return ascii_name[: -len(apex) - 1]
