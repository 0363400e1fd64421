"""Small typed readers for environment variables.

Each reader fails loudly on a value it cannot parse, so a typo in a deploy
stops the process at start-up instead of running with a silent default. A variable set
but empty (`NAME=`, as a template leaves it) reads as unset: the default, for a flag
as for a number, so an empty `SESSION_COOKIE_SECURE=` keeps production's secure cookies.
"""

from __future__ import annotations

import builtins
import ipaddress
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_secret(name: str, default: str = "") -> str:
    """A secret from NAME, or from the file NAME_FILE names (a container's or systemd's
    credentials: the value never sits in the environment), its trailing newline dropped.
    Both set is a mistake, refused."""
    path = os.environ.get(f"{name}_FILE", "")
    if not path:
        return env_str(name, default)
    if os.environ.get(name):
        raise ImproperlyConfigured(f"{name} and {name}_FILE are both set: keep one")
    try:
        return Path(path).read_text(encoding="utf-8").rstrip("\r\n")
    except OSError as error:
        raise ImproperlyConfigured(f"{name}_FILE={path}: {error.strerror}") from None


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


@dataclass(frozen=True)
class Setting:
    """One environment variable the service reads: what the configuration reference and
    `.env.example` say of it (manage.py settingsreference writes both from these)."""

    name: str
    section: str
    doc: str  # one line: what it does
    default: str  # the default as a reader sees it (DEBUG's changes included)
    secret: bool = False  # also read from NAME_FILE; never printed
    # The line a production `.env` sets (`.env.example`); None: the default, commented out.
    example: str | None = None


# Every setting declared so far, by name: the settings package declares them all on import.
DECLARED: dict[str, Setting] = {}

T = TypeVar("T")


class Section:
    """The settings of one subject. Each reader declares its variable (name, default, one
    line of doc) where it reads it, so the value, its default and its documentation are
    written once, side by side.

    A flag or a number set but empty reads as its default (it has no empty value); a text
    or a list set but empty is the empty value, which such a setting documents ("empty:
    off")."""

    def __init__(self, title: str) -> None:
        self.title = title

    def declare(self, name: str, doc: str, shown: str, **extra: Any) -> None:
        setting = Setting(name=name, section=self.title, doc=doc, default=shown, **extra)
        if DECLARED.setdefault(name, setting) != setting:
            raise ImproperlyConfigured(f"{name} is declared twice, differently")

    def _read(
        self,
        reader: Callable[[str, T], T],
        name: str,
        default: T,
        doc: str,
        shown: str | None,
        example: str | None,
    ) -> T:
        self.declare(name, doc, shown if shown is not None else _shown(default), example=example)
        return reader(name, default)

    def flag(
        self,
        name: str,
        default: bool,
        doc: str,
        *,
        shown: str | None = None,
        example: str | None = None,
    ) -> bool:
        return self._read(env_bool, name, default, doc, shown, example)

    def integer(
        self,
        name: str,
        default: int,
        doc: str,
        *,
        shown: str | None = None,
        example: str | None = None,
    ) -> int:
        return self._read(env_int, name, default, doc, shown, example)

    def number(
        self,
        name: str,
        default: float,
        doc: str,
        *,
        shown: str | None = None,
        example: str | None = None,
    ) -> float:
        return self._read(env_float, name, default, doc, shown, example)

    def text(
        self,
        name: str,
        default: str,
        doc: str,
        *,
        shown: str | None = None,
        example: str | None = None,
        secret: bool = False,
    ) -> str:
        shown = shown if shown is not None else _shown(default)
        self.declare(name, doc, shown, example=example, secret=secret)
        return env_secret(name, default) if secret else env_str(name, default)

    def list(
        self,
        name: str,
        default: str,
        doc: str,
        *,
        shown: str | None = None,
        example: str | None = None,
        secret: bool = False,
    ) -> builtins.list[str]:
        shown = shown if shown is not None else _shown(default)
        self.declare(name, doc, shown, example=example, secret=secret)
        raw = env_secret(name, default) if secret else env_str(name, default)
        return [item.strip() for item in raw.split(",") if item.strip()]

    def networks(
        self,
        name: str,
        default: str,
        doc: str,
        *,
        shown: str | None = None,
        example: str | None = None,
    ) -> builtins.list[IPNetwork]:
        self.declare(name, doc, shown if shown is not None else _shown(default), example=example)
        return env_networks(name, default)


def _shown(default: object) -> str:
    if isinstance(default, bool):
        return "on" if default else "off"
    if default == "":
        return "empty"
    return f"`{default:g}`" if isinstance(default, float) else f"`{default}`"


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
