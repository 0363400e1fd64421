"""Small typed readers for environment variables.

Each reader fails loudly on a value it cannot parse, so a typo in a deploy
stops the process at start-up instead of running with a silent default.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
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
        raise ImproperlyConfigured(f"PETSTORE_ENV_FILE={path}: no such file ({file})")
    with file.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, sep, value = line.partition("=")
            if not sep or not name.strip():
                raise ImproperlyConfigured(f"{file}:{number}: expected NAME=value, got {line!r}")
            os.environ.setdefault(name.strip(), value.strip())
