"""The certificate endpoint's answers, kept in its process until the database says a row
that decides them changed.

A full TLS handshake makes Caddy ask the endpoint for the name's certificate; reading it
from the rows costs an indexed query and a Fernet decryption, again for every handshake
although nothing changed. So each endpoint process keeps its answers by name (the chain and
key in clear, or "none") and drops them all when the edge version moves: a number that
database triggers raise whenever a certificate row is written or a domain is added,
removed, renamed or changes state (domains/edge/version.py), whichever code, bulk update or
raw SQL wrote it.

- The version is watched (petstore/versions/watcher.py's `Watcher`, polled): a thread of each
  process reads it every POLL_EVERY, with the database's incarnation, so a failover or a
  restore that brings a number back for other rows is a change too. An answer is served
  only while the version was read less than FRESH_FOR ago; past that (the thread is late,
  the database unreachable) a request reads it first itself. So a change committed at t is
  served from t + FRESH_FOR at the latest (usually within POLL_EVERY): Remove, a stopped
  domain, a renewal, a replaced certificate alike.
- The cache is a plain one with a generation: the stamp its answers were read under. A
  request that finds the watcher on another stamp drops them all first, and an answer is
  kept only if the stamp is still the one it was read under, so a read that raced a change
  never outlives it.
- By the clock alone an answer is kept until the certificate's notAfter, and never longer
  than MAX_AGE (a certificate whose notBefore is still ahead, which no CA path stores).
- Names without a certificate come from anyone's SNI: at most UNKNOWN_NAMES of them, the
  least recently asked dropped first. Names with one: at most EDGE_CACHED_CERTIFICATES, the
  same way: any client can ask every live name, and a process's memory must not grow with
  the platform's domains.
- Keys in clear live only in this process's memory, as in each answer it sends Caddy.

The endpoint's secret (`manage.py edge` writes it at each start) is read from its file on
the same beat, without the database: a request never reads the file while the thread runs.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from domains.dns import hostnames
from domains.edge import version
from domains.edge.certificates import NO_CERTIFICATE, Answer, look_up
from domains.edge.paths import SECRET_FILE
from petstore.versions import Stamp, Watcher

POLL_EVERY = 0.25  # seconds between two reads of the version by a process's thread
FRESH_FOR = 1.0  # seconds an answer may be served after its version was last confirmed
MAX_AGE = 300.0  # seconds an answer is kept when nothing changes
UNKNOWN_NAMES = 10_000  # names kept with no certificate, per process


@dataclass(frozen=True)
class _Entry:
    answer: Answer
    until: float  # time.time() from which the answer is read again


class CertificateCache:
    def __init__(self, *, fresh_for: float = FRESH_FOR) -> None:
        self.watcher = Watcher(version.EDGE, fresh_for=fresh_for)
        self._lock = threading.Lock()  # the entries and their stamp
        self._stamp: Stamp | None = None  # what the entries were read under
        self._secret = ""
        self._secret_read_at = -math.inf
        self._served: OrderedDict[str, _Entry] = OrderedDict()
        self._unknown: OrderedDict[str, _Entry] = OrderedDict()

    # --- The version and the secret -------------------------------------------------

    def read_secret(self) -> None:
        started = time.monotonic()
        try:
            secret = (Path(settings.EDGE_DIR) / SECRET_FILE).read_text().strip()
        except FileNotFoundError:
            secret = ""  # before `manage.py edge` wrote it: nothing is answered
        self._secret, self._secret_read_at = secret, started

    def refresh(self) -> None:
        """What the thread does at each beat."""
        self.read_secret()
        self.watcher.read()

    def secret(self) -> str:
        """This edge run's secret; empty before `manage.py edge` wrote it."""
        if time.monotonic() - self._secret_read_at >= self.watcher.fresh_for:
            self.read_secret()
        return self._secret

    # --- Answers ----------------------------------------------------------------------

    def answer(self, server_name: str) -> Answer:
        """The endpoint's answer for a name a client sent in its handshake."""
        name = hostnames.comparable(server_name)
        if not name:
            return NO_CERTIFICATE
        self.watcher.fresh()  # read now if the last read is too old
        now = time.time()
        with self._lock:
            read_under = self.watcher.latest()
            if read_under != self._stamp:  # another generation: nothing kept holds
                self._served.clear()
                self._unknown.clear()
                self._stamp = read_under
            kept = self._served if name in self._served else self._unknown
            entry = kept.get(name)
            if entry is not None and now < entry.until:
                kept.move_to_end(name)
                return entry.answer
        answer = look_up(name)
        until = now + MAX_AGE
        if answer.expires is not None:
            until = min(until, answer.expires.timestamp())
        with self._lock:
            # Else a change came during the read: not kept.
            if self._stamp == read_under == self.watcher.latest():
                self._keep(name, _Entry(answer, until))
        return answer

    def _keep(self, name: str, entry: _Entry) -> None:
        self._served.pop(name, None)
        self._unknown.pop(name, None)
        kept, limit = (
            (self._served, settings.EDGE_CACHED_CERTIFICATES)
            if entry.answer.bundle is not None
            else (self._unknown, UNKNOWN_NAMES)
        )
        kept[name] = entry
        while len(kept) > limit:
            kept.popitem(last=False)

    # --- The thread -------------------------------------------------------------------

    def keep_fresh(self) -> None:
        """Start this process's thread, once (a forked process starts its own): the secret,
        then the version, every POLL_EVERY."""
        self.watcher.keep_fresh(POLL_EVERY, also=self.read_secret)
