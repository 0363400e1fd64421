"""Small typed readers for environment variables.

Each reader fails loudly on a value it cannot parse, so a typo in a deploy
stops the process at start-up instead of running with a silent default. A variable set
but empty (`NAME=`, as a template leaves it) reads as unset: the default, for a flag
as for a number, so an empty `SESSION_COOKIE_SECURE=` keeps production's secure cookies.

One function reads them all (`read`); what differs between a flag, a number, a text and a
list is a `Kind`: how its text parses and what its default is.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar
from urllib.parse import parse_qs, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}

D = TypeVar("D")  # a default as a declaration writes it
T = TypeVar("T")  # the value the settings get

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Kind(Generic[D, T]):
    """One kind of value: how a variable's text parses (refusing, in one line naming the
    variable, what it cannot), how a declared default becomes a value, and whether a
    variable set but empty reads as unset (a flag or a number has no empty value) or as
    its empty value (a text, a list)."""

    parse: Callable[[str, str], T]  # (name, the variable's text) -> the value
    default: Callable[[str, D], T]  # (name, the declared default) -> the value
    blank_is_unset: bool


def _given(name: str, default: T) -> T:
    return default


def _scalar(what: str, convert: Callable[[str], T]) -> Callable[[str, str], T]:
    """A parser for one value of `convert`'s type, refused as `NAME must be <what>`."""

    def parse(name: str, raw: str) -> T:
        try:
            return convert(raw)
        except ValueError:
            raise ImproperlyConfigured(f"{name} must be {what}, got {raw!r}") from None

    return parse


def _boolean(raw: str) -> bool:
    value = raw.strip().lower()
    if value in _TRUE | _FALSE:
        return value in _TRUE
    raise ValueError(raw)


def _text(name: str, raw: str) -> str:
    return raw


def _items(name: str, raw: str) -> list[str]:
    """A comma-separated list; blanks are dropped."""
    return [item.strip() for item in raw.split(",") if item.strip()]


def _networks(name: str, raw: str) -> list[IPNetwork]:
    """A comma-separated list of IP addresses and CIDR networks (`127.0.0.0/8,::1`); an
    address is a network of one. A network with host bits set (`10.0.0.1/24`) is refused,
    not rounded: it is more likely a typo than a wish."""
    networks = []
    for item in _items(name, raw):
        try:
            networks.append(ipaddress.ip_network(item))
        except ValueError as exc:
            raise ImproperlyConfigured(
                f"{name} must be comma-separated IP addresses or networks "
                f"(e.g. 127.0.0.1,10.0.0.0/8), got {item!r}: {exc}"
            ) from None
    return networks


FLAG: Kind[bool, bool] = Kind(_scalar("a boolean (1/0, true/false)", _boolean), _given, True)
INTEGER: Kind[int, int] = Kind(_scalar("an integer", int), _given, True)
NUMBER: Kind[float, float] = Kind(_scalar("a number", float), _given, True)
TEXT: Kind[str, str] = Kind(_text, _given, False)
# A list's default is written as its variable would be: comma-separated text.
LIST: Kind[str, list[str]] = Kind(_items, _items, False)
NETWORKS: Kind[str, list[IPNetwork]] = Kind(_networks, _networks, False)


def raw_value(name: str, *, secret: bool = False) -> str | None:
    """NAME's text, None when unset. A secret may come instead from the file NAME_FILE
    names (a container's or systemd's credentials: the value never sits in the
    environment), its trailing newline dropped; both set is a mistake, refused."""
    path = os.environ.get(f"{name}_FILE", "") if secret else ""
    if not path:
        return os.environ.get(name)
    if os.environ.get(name):
        raise ImproperlyConfigured(f"{name} and {name}_FILE are both set: keep one")
    try:
        return Path(path).read_text(encoding="utf-8").rstrip("\r\n")
    except OSError as error:
        raise ImproperlyConfigured(f"{name}_FILE={path}: {error.strerror}") from None


def read(kind: Kind[D, T], name: str, default: D, *, secret: bool = False) -> T:
    """The value of variable `name` as `kind` reads it, or its default."""
    raw = raw_value(name, secret=secret)
    if raw is None or (kind.blank_is_unset and not raw.strip()):
        return kind.default(name, default)
    return kind.parse(name, raw)


def env_str(name: str, default: str = "") -> str:
    return read(TEXT, name, default)


def env_secret(name: str, default: str = "") -> str:
    return read(TEXT, name, default, secret=True)


def env_bool(name: str, default: bool = False) -> bool:
    return read(FLAG, name, default)


def env_int(name: str, default: int) -> int:
    return read(INTEGER, name, default)


def env_float(name: str, default: float) -> float:
    return read(NUMBER, name, default)


def env_list(name: str, default: str = "") -> list[str]:
    return read(LIST, name, default)


def env_networks(name: str, default: str = "") -> list[IPNetwork]:
    """Set but empty: none."""
    return read(NETWORKS, name, default)


# In a list of one value per item of another setting: this item has none.
NONE_FOR_THIS_ONE = "-"


def one_each(name: str, values: list[str], *, count: int, of: str) -> list[str]:
    """List setting `name` read as one value for each of the `count` items of setting `of`:
    one per item, in their order, or one for all of them, or none; `-` in place of a value,
    or none at all, is "" (that item has none)."""
    if len(values) not in {0, 1, count}:
        raise ImproperlyConfigured(
            f"{name} must have one value, or one per item of {of} ({count}), not {len(values)}"
        )
    spread = values * count if len(values) == 1 else values or [""] * count
    return ["" if value == NONE_FOR_THIS_ONE else value for value in spread]


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


class Section:
    """The settings of one subject. Each reader declares its variable (name, default, one
    line of doc) where it reads it, so the value, its default and its documentation are
    written once, side by side: `web.integer("WEB_THREADS", 1, "Threads per web worker ...")`.

    A flag or a number set but empty reads as its default (it has no empty value); a text
    or a list set but empty is the empty value, which such a setting documents ("empty:
    off")."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.flag = Reader(self, FLAG)
        self.integer = Reader(self, INTEGER)
        self.number = Reader(self, NUMBER)
        self.text = Reader(self, TEXT)
        self.list = Reader(self, LIST)
        self.networks = Reader(self, NETWORKS)

    def declare(self, name: str, doc: str, shown: str, **extra: Any) -> None:
        setting = Setting(name=name, section=self.title, doc=doc, default=shown, **extra)
        if DECLARED.setdefault(name, setting) != setting:
            raise ImproperlyConfigured(f"{name} is declared twice, differently")


@dataclass(frozen=True)
class Reader(Generic[D, T]):
    """A section's reader of one kind: declares the variable, then reads it."""

    section: Section
    kind: Kind[D, T]

    def __call__(
        self,
        name: str,
        default: D,
        doc: str,
        *,
        shown: str | None = None,  # the default as the reference shows it; None: `default`
        example: str | None = None,
        secret: bool = False,
    ) -> T:
        shown = shown if shown is not None else _shown(default)
        self.section.declare(name, doc, shown, example=example, secret=secret)
        return read(self.kind, name, default, secret=secret)


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
# `make run`'s mail inbox (development tooling, named here and never imported): DEBUG only,
# as production does not ship devtools.
DEVELOPMENT_EMAIL_BACKENDS = {"inbox": "devtools.mailinbox.InboxBackend"}


def email_url(name: str, value: str, *, development: bool = False) -> dict[str, Any]:
    """Django's EMAIL_* settings from one URL: `smtp://user:password@host:587/?tls=1`
    (STARTTLS), `smtps://user:password@host:465` (TLS from the start, as `?ssl=1`),
    `console://` (the mail is printed), or with `development` (DEBUG) `inbox://` (`make
    run`'s mail inbox). The user and password are percent-decoded."""
    url = urlsplit(value)
    backends = {**EMAIL_BACKENDS, **(DEVELOPMENT_EMAIL_BACKENDS if development else {})}
    backend = backends.get(url.scheme)
    if backend is None:
        also = " (inbox:// under DEBUG only)" if url.scheme in DEVELOPMENT_EMAIL_BACKENDS else ""
        raise ImproperlyConfigured(
            f"{name} must start with smtp://, smtps:// or console://, got {url.scheme!r}{also}"
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
