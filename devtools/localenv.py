"""`var/local.env`, the development settings of a checkout, as `make run` writes them.

`make run` names the file to every process it starts (PETSTORE_ENV_FILE); a second terminal
exports the same name, so `manage.py` there must find in it everything `make run` was told:
DEBUG, this checkout's key-encryption key, a metrics token, the TSIG key of DNS-01 (the
development DNS server takes the updates it signs), and the ports of the latest run.
A port moved on make's command line (`make run PORT=8001`) is written there too: otherwise
`verifydomain` in another terminal asks 5353 while the development DNS server listens
elsewhere.

The file is updated in place at each run: every line is kept (DEBUG, the key, anything the
developer added) except the port lines, which become this run's; a missing metrics token is
added, and so is a missing TSIG key. The keys are never replaced: a new key-encryption key
could not open what the old one sealed.
"""

from __future__ import annotations

import base64
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

# The ports `make run` may be moved off, in the order its command line names them. PORT and
# HTTPS_PORT are always set (devserver.take_run_ports: the command line's or make run's
# defaults); the other two only when set, else the settings' defaults apply.
PORT_SETTINGS = ("PORT", "HTTPS_PORT", "EDGE_CERTIFICATES_PORT", "DOMAINS_DEV_DNS_PORT")
PORTS_COMMENT = "# The ports of the latest `make run` (manage.py in another terminal uses them):"
HEADER = "# Development settings for this checkout, written by `make run`."
# DNS-01 itself is on under DEBUG with an ACME CA only (petstore/settings/dns01.py).
TSIG_COMMENT = "# DNS-01's TSIG key: `manage.py devdns` takes the updates it signs."
TSIG_KEY_NAME = "make-run."


def token() -> str:
    """32 random bytes in urlsafe base64: what the settings require of a sealing key."""
    return secrets.token_urlsafe(32)


def tsig_secret() -> str:
    """32 random bytes in standard base64, as a DNS server's configuration writes a key."""
    return base64.b64encode(secrets.token_bytes(32)).decode()


def _name(line: str) -> str:
    name, sep, _ = line.partition("=")
    return name.strip() if sep and not line.lstrip().startswith("#") else ""


def updated(text: str, environ: Mapping[str, str]) -> str:
    """The file's new text: `text` (empty for a new file) with this run's port lines (the
    PORT_SETTINGS set in `environ`), a METRICS_TOKEN and a TSIG key."""
    lines = text.splitlines()
    if not lines:
        lines = [HEADER, "DEBUG=1", f"DOMAINS_KEY_ENCRYPTION_KEY={token()}"]
    kept = [line for line in lines if _name(line) not in PORT_SETTINGS and line != PORTS_COMMENT]
    if not any(_name(line) == "METRICS_TOKEN" for line in kept):
        # The bearer token of GET /metrics (the curl line make run's hints print).
        kept.append(f"METRICS_TOKEN={token()}")
    if not any(_name(line) == "DOMAINS_DNS01_TSIG_SECRET" for line in kept):
        kept += [
            TSIG_COMMENT,
            f"DOMAINS_DNS01_TSIG_KEY_NAME={TSIG_KEY_NAME}",
            f"DOMAINS_DNS01_TSIG_SECRET={tsig_secret()}",
        ]
    ports = [f"{name}={environ[name]}" for name in PORT_SETTINGS if environ.get(name)]
    if ports:
        kept += [PORTS_COMMENT, *ports]
    return "\n".join(kept) + "\n"


def write(path: Path, environ: Mapping[str, str]) -> None:
    """Create or update the file at `path`, readable by its owner only (it holds a key)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    new = updated(text, environ)
    if new == text:
        return
    temporary = path.with_name(path.name + ".new")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(new)
    os.replace(temporary, path)  # a reader never sees half a file
