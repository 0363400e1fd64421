"""Small typed readers for environment variables.

Each reader fails loudly on a value it cannot parse, so a typo in a deploy
stops the process at start-up instead of running with a silent default. A variable set
but empty (`NAME=`, as a template leaves it) reads as unset: the default, for a flag
as for a number, so an empty `SESSION_COOKIE_SECURE=` keeps production's secure cookies.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from None


def env_list(name: str, default: str = "") -> list[str]:
    """A comma-separated list; blanks are dropped."""
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def env_networks(name: str, default: str = "") -> list[IPNetwork]:
    """A comma-separated list of IP addresses and CIDR networks (`127.0.0.0/8,::1`); an
    address is a network of one. Set but empty: none. A network with host bits set
    (`10.0.0.1/24`) is refused, not rounded: it is more likely a typo than a wish."""
    networks = []
    for item in env_list(name, default):
        try:
            networks.append(ipaddress.ip_network(item))
        except ValueError as exc:
            raise ImproperlyConfigured(
                f"{name} must be comma-separated IP addresses or networks "
                f"(e.g. 127.0.0.1,10.0.0.0/8), got {item!r}: {exc}"
            ) from None
    return networks


def load_env_file(path: str, *, base_dir: Path) -> None:
    """Read KEY=VALUE lines (blank lines and # comments skipped) into os.environ.

    Variables already set in the environment win. An empty path reads nothing; a
    relative one is taken from base_dir, so `PETSTORE_ENV_FILE=var/local.env` means the
    same file from any directory. A path that names no file stops the process: a typo
    must not silently drop the development settings.
    """
    if not path:
        return
    file = base_dir / path
    if not file.is_file():
        raise ImproperlyConfigured(
            f"PETSTORE_ENV_FILE={path}: no such file ({file}); `make run` writes "
            "var/local.env: run it once, or name another file"
        )
    with file.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, sep, value = line.partition("=")
            if not sep or not name.strip():
                raise ImproperlyConfigured(f"{file}:{number}: expected NAME=value, got {line!r}")
            os.environ.setdefault(name.strip(), value.strip())


EMAIL_BACKENDS = {
    "smtp": "django.core.mail.backends.smtp.EmailBackend",
    "smtps": "django.core.mail.backends.smtp.EmailBackend",
    "console": "django.core.mail.backends.console.EmailBackend",
}


def email_url(name: str, value: str) -> dict[str, Any]:
    """Django's EMAIL_* settings from one URL: `smtp://user:password@host:587/?tls=1`
    (STARTTLS), `smtps://user:password@host:465` (TLS from the start, as `?ssl=1`), or
    `console://` (the mail is printed). The user and password are percent-decoded."""
    url = urlsplit(value)
    backend = EMAIL_BACKENDS.get(url.scheme)
    if backend is None:
        raise ImproperlyConfigured(
            f"{name} must start with smtp://, smtps:// or console://, got {url.scheme!r}"
        )
    query = parse_qs(url.query)
    unknown = set(query) - {"tls", "ssl", "timeout"}
    if unknown:
        raise ImproperlyConfigured(f"{name}: unknown option(s) {', '.join(sorted(unknown))}")

    def flag(option: str) -> bool:
        raw = query.get(option, ["0"])[-1].lower() or "0"
        if raw not in _TRUE | _FALSE:
            raise ImproperlyConfigured(f"{name}: {option} must be 1 or 0, got {raw!r}")
        return raw in _TRUE

    try:
        port = url.port
        timeout = float(query["timeout"][-1]) if "timeout" in query else 10.0
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}: {exc}") from None
    use_ssl = url.scheme == "smtps" or flag("ssl")
    use_tls = flag("tls")
    if use_ssl and use_tls:
        raise ImproperlyConfigured(f"{name}: choose tls (STARTTLS) or ssl, not both")
    return {
        "EMAIL_BACKEND": backend,
        "EMAIL_HOST": url.hostname or "localhost",
        "EMAIL_PORT": port or (465 if use_ssl else 25),
        "EMAIL_HOST_USER": unquote(url.username or ""),
        "EMAIL_HOST_PASSWORD": unquote(url.password or ""),
        "EMAIL_USE_TLS": use_tls,
        "EMAIL_USE_SSL": use_ssl,
        "EMAIL_TIMEOUT": timeout,
    }
