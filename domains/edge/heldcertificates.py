"""Caddy holding the live domains' certificates itself, so a full TLS handshake asks nobody
(EDGE_HELD_CERTIFICATES; off by default: each load closes Caddy's idle kept-alive
connections, docs/decisions/edge.md).

In a full handshake Caddy looks in its in-memory cache before it asks any `get_certificate`
manager; certificates it has loaded (`tls.certificates.load_pem`) are in that cache. So a
thread of `manage.py edge` loads the live certificates into Caddy through its admin API,
and the certificate endpoint (domains/edge/endpoint.py) answers only the names Caddy does not
hold: one issued since the last load, one past EDGE_HELD_CERTIFICATES, a name with none
(the placeholder). Asking the endpoint was most of what the edge cost over its floor
(docs/decisions/performance.md).

What the edge promises stays true:

- A new certificate is served within a second of its commit: by the endpoint, until a load
  holds it. A load that only adds certificates waits until the live set has not changed
  for ADD_AFTER_QUIET, or at most ADD_WITHIN: a burst of issues costs Caddy one reload, not
  one each.
- A certificate no longer served (its domain removed, stopped or renamed; the certificate
  replaced, deleted, or past its notAfter) is gone within FRESH_FOR of the change: the
  edge version (domains/edge/version.py) is read every POLL_EVERY, and a load without it
  is sent at once. Caddy loads the new set and then drops what the set no longer has
  (its TLS app's clean-up), so names that stay are never missing meanwhile.
- What Caddy holds is never older than the endpoint's answers may be: when the version has
  not been read for FRESH_FOR (the database refuses, or hangs), a watchdog makes Caddy hold
  nothing, and handshakes go to the endpoint, which fails as the database does.
- When a load cannot be sent at all (Caddy does not answer), what Caddy holds is unknown:
  the thread ends, and the edge with it (domains/edge/processes.py). Its restart begins
  with nothing held.
- Keys are unsealed in this process, which holds DOMAINS_KEY_ENCRYPTION_KEY as the
  endpoint does, and go to Caddy over its admin socket (0600, domains/edge/admin.py) into
  its memory only: its configuration is never saved (`admin.config.persist` off).

One tenant's row never stops another's: a certificate is loaded only after its chain and key
parse, the key is the certificate's, and the certificate names its domain and nothing else
(Caddy serves a loaded certificate for every name it carries, so a row naming another
tenant's host would be served there). One that fails is logged and left to the endpoint.
Should Caddy still refuse a load, it is made to hold nothing (logged), and the same set is
not sent again until it changes.

Which: every live certificate, up to EDGE_HELD_CERTIFICATES, the oldest domains first (the
set that moves least as domains come and go). A load parses every held certificate again
(about 0.1 ms each), which that bound keeps well under a second (docs/decisions/edge.md).
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cryptography import x509
from cryptography.fernet import InvalidToken
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import NameOID
from django.db import DatabaseError, connection
from django.utils import timezone

from domains.edge import admin, version
from domains.edge.cache import FRESH_FOR, MAX_AGE, POLL_EVERY
from domains.edge.certificates import live_certificates
from domains.metrics import edge_certificates_loaded
from domains.pki import sealing
from petstore.versions import Stamp, Watcher

logger = logging.getLogger(__name__)

# A certificate to add is loaded once the live set has not changed for ADD_AFTER_QUIET
# seconds, or ADD_WITHIN seconds after it came, whichever is first.
ADD_AFTER_QUIET = 1.0
ADD_WITHIN = 10.0
# Where Caddy's configuration lists the loaded certificates (caddy.py writes it empty).
LOAD_PEM = "/config/apps/tls/certificates/load_pem"
# How long the edge waits for Caddy's admin API at start.
ADMIN_STARTS_WITHIN = 30.0
CN = NameOID.COMMON_NAME


@dataclass(frozen=True)
class Live:
    """A live domain's served certificate, as its row is now."""

    certificate_id: int
    # A certificate is its serial (unique): a row written again for another purpose (its
    # renewal window, a key sealed again) holds the same certificate, and reloads nothing.
    serial: str
    not_after: datetime


def live_now(limit: int) -> dict[str, Live]:
    """Each live domain's served certificate (domains/edge/certificates.py's rule), by
    hostname, the oldest domains first, at most `limit`."""
    rows = (
        live_certificates()
        .order_by("domain_id", "-not_after", "-pk")
        .distinct("domain_id")
        .values_list("domain__hostname", "pk", "serial", "not_after")[:limit]
    )
    return {name: Live(pk, serial, not_after) for name, pk, serial, not_after in rows}


def served_names(leaf: x509.Certificate) -> list[str]:
    """Every name Caddy serves a loaded certificate for (certmagic's own list): its subject's
    common name, then its DNS names, addresses, email addresses and URIs."""
    common = [attribute.value for attribute in leaf.subject.get_attributes_for_oid(CN)]
    try:
        alternative = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        alternative = x509.SubjectAlternativeName([])
    names = [str(name).lower() for name in common]
    for kind in (x509.DNSName, x509.IPAddress, x509.RFC822Name, x509.UniformResourceIdentifier):
        names += [str(name).lower() for name in alternative.get_values_for_type(kind)]
    return list(dict.fromkeys(names))


def loadable(hostname: str, pem: str, key_pem: str) -> str | None:
    """Why Caddy must not hold this certificate for `hostname`, or None when it may."""
    try:
        chain = x509.load_pem_x509_certificates(pem.encode())
        key = serialization.load_pem_private_key(key_pem.encode(), password=None)
    except (ValueError, TypeError) as error:
        return f"it does not parse ({error})"
    if (names := served_names(chain[0])) != [hostname]:
        return f"it names {', '.join(names) or 'nothing'}, not {hostname} alone"
    if chain[0].public_key() != key.public_key():
        return "its key is not the certificate's"
    return None


class Holder:
    """What Caddy holds, kept in step with the rows by two threads of `manage.py edge`: the
    loop (`beat()` every POLL_EVERY; tests call it directly) and a watchdog that makes Caddy
    hold nothing when the database has not answered for FRESH_FOR, whether it refuses the
    loop's reads or leaves one waiting. (A load under way is no news of the database: the
    next beat reads it.)"""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.watcher = Watcher(version.EDGE)
        self.wanted: dict[str, Live] = {}  # the rows as last read
        self.read_under: Stamp | None = None
        self.read_again_at = -math.inf  # time.monotonic()
        self.changed_at = -math.inf  # time.monotonic() when the rows read last differed
        self.confirmed_at = -math.inf  # time.monotonic() at the start of the last good read
        self.reading_since: float | None = None  # a read of the database under way
        self.failing = False
        self.entries: dict[Live, dict[str, Any] | None] = {}  # None: not loadable
        self.adding_since: float | None = None  # when a certificate to add was first seen
        self.refused: dict[str, Live] | None = None  # the last set Caddy refused
        self.held: dict[str, Live] = {}  # what Caddy holds now
        self._loading = threading.Lock()  # the admin calls and `held`

    # --- The threads --------------------------------------------------------------------

    def hold(self) -> None:
        """The loop; returns only by raising (admin.AdminError: Caddy cannot be told what
        to hold, or the watchdog could not), which ends the edge."""
        self._wait_for_caddy()
        watchdog = threading.Thread(target=self._watch, name="edge-held-watchdog", daemon=True)
        watchdog.start()
        while watchdog.is_alive():
            started = time.monotonic()
            self.beat()
            time.sleep(max(0.0, POLL_EVERY - (time.monotonic() - started)))
        raise admin.Unreachable("the watchdog could not tell Caddy to hold nothing")

    def _wait_for_caddy(self) -> None:
        deadline = time.monotonic() + ADMIN_STARTS_WITHIN
        while True:
            try:
                admin.call("GET", LOAD_PEM)
                return
            except admin.Unreachable:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def _watch(self) -> None:
        while True:
            time.sleep(POLL_EVERY)
            self.unconfirmed()

    def unconfirmed(self) -> None:
        """The watchdog's step: nothing held while the database does not answer."""
        now, reading = time.monotonic(), self.reading_since
        unconfirmed_for = now - self.confirmed_at
        waiting = reading is not None and now - reading >= FRESH_FOR
        if (waiting or (self.failing and unconfirmed_for >= FRESH_FOR)) and self.held:
            logger.error(
                "The edge has not read the database for %.1f s: Caddy holds no certificate "
                "until it can (handshakes ask the endpoint)",
                unconfirmed_for,
            )
            self._load({}, result="emptied")

    def beat(self) -> None:
        started = time.monotonic()
        try:
            self._read(started)
        except DatabaseError:
            if not self.failing:
                logger.exception("The edge cannot read the database")
            self.failing, self.read_under = True, None
            connection.close()  # this thread's own; a new one at the next beat
            return
        self.failing = False
        if time.monotonic() - started >= FRESH_FOR:
            return  # a read this slow is not news: the next one decides
        now = timezone.now()
        wanted = {name: live for name, live in self.wanted.items() if live.not_after > now}
        gone = any(wanted.get(name) != live for name, live in self.held.items())
        adding = wanted != self.refused and any(
            self.entries.get(wanted[name]) for name in wanted.keys() - self.held.keys()
        )
        if not adding:
            self.adding_since, due = None, False
        else:
            if self.adding_since is None:
                self.adding_since = started
            quiet = started - self.changed_at >= ADD_AFTER_QUIET
            due = quiet or started - self.adding_since >= ADD_WITHIN
        if gone or due:
            self._load(wanted, result="loaded")

    # --- The rows -----------------------------------------------------------------------

    def _read(self, started: float) -> None:
        self.reading_since = started
        try:
            stamp = self.watcher.read()
            if stamp == self.read_under and started < self.read_again_at:
                self.confirmed_at = started
                return
            wanted = live_now(self.limit)
            new = [live.certificate_id for live in wanted.values() if live not in self.entries]
            rows = live_certificates().filter(pk__in=new).values_list("pk", "pem", "key_pem")
            by_id = {pk: (pem, sealed) for pk, pem, sealed in rows}
        finally:
            self.reading_since = None
        self.confirmed_at = started
        if wanted != self.wanted:
            self.wanted, self.changed_at = wanted, started
        self._entries_for(wanted, by_id)
        self.read_under = stamp
        # Also when nothing changed: a certificate whose notBefore came since.
        self.read_again_at = started + MAX_AGE

    def _entries_for(self, wanted: dict[str, Live], by_id: dict[int, tuple[str, str]]) -> None:
        """Caddy's entries for what is wanted (each new row's key unsealed once, and
        checked), forgetting the rest."""
        names = {live: name for name, live in wanted.items()}
        entries = {live: self.entries[live] for live in names if live in self.entries}
        for live in names.keys() - entries.keys():
            if live.certificate_id not in by_id:
                continue  # gone since: the next beat reads the rows again
            pem, sealed = by_id[live.certificate_id]
            problem: str | None = "its key does not open with DOMAINS_KEY_ENCRYPTION_KEY"
            with contextlib.suppress(InvalidToken):
                key_pem = sealing.unseal(sealed)
                problem = loadable(names[live], pem, key_pem)
            if problem:
                logger.error(
                    "Caddy does not hold the certificate of %s: %s; the endpoint serves it",
                    names[live], problem,
                )  # fmt: skip
                entries[live] = None
            else:
                entries[live] = {"certificate": pem, "key": key_pem}
        self.entries = entries

    # --- Caddy --------------------------------------------------------------------------

    def _load(self, wanted: dict[str, Live], *, result: str) -> None:
        with self._loading:
            held = {name: live for name, live in wanted.items() if self.entries.get(live)}
            if held == self.held:
                return
            if held and time.monotonic() - self.confirmed_at >= FRESH_FOR:
                return  # the watchdog's to empty; nothing is added on rows this old
            started = time.monotonic()
            try:
                admin.call("PATCH", LOAD_PEM, [self.entries[live] for live in held.values()])
            except admin.Refused:
                logger.exception(
                    "Caddy refused the certificates: it holds none, the endpoint serves all"
                )
                admin.call("PATCH", LOAD_PEM, [])  # refused or not answered: the edge ends
                self.refused, held, result = wanted, {}, "refused"
            self.held, self.adding_since = held, None
            seconds = time.monotonic() - started
        edge_certificates_loaded(result, seconds=seconds)
        logger.info("Caddy holds %d certificates (loaded in %.0f ms)", len(held), 1000 * seconds)
