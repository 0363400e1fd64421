"""The certificate endpoint's answers, kept in its process until the database says a row
that decides them changed.

A full TLS handshake makes Caddy ask the endpoint for the name's certificate; reading it
from the rows costs an indexed query and a Fernet decryption, again for every handshake
although nothing changed. So each endpoint process keeps its answers by name (the chain and
key in clear, or "none") and drops them all when the edge version moves: a number that
database triggers raise whenever a certificate row is written or a domain is added,
removed, renamed or changes state (domains/edge/version.py), whichever code, bulk update or
raw SQL wrote it.

- A thread of each process reads the version every POLL_EVERY. An answer is served only
  while the version was read less than FRESH_FOR ago; past that (the thread is late, the
  database unreachable) a request reads it first itself. So a change committed at t is
  served from t + FRESH_FOR at the latest (usually within POLL_EVERY): Remove, a stopped
  domain, a renewal, a replaced certificate alike.
- An answer read under one version is kept only if the version is still that one once it
  is read, so a read that raced a change never outlives it.
- By the clock alone an answer is kept until the certificate's notAfter, and never longer
  than MAX_AGE (a certificate whose notBefore is still ahead, which no CA path stores).
- Names without a certificate come from anyone's SNI: at most UNKNOWN_NAMES of them, the
  least recently asked dropped first. Names with one are at most the active domains.
- Keys in clear live only in this process's memory, as in each answer it sends Caddy.

The endpoint's secret (`manage.py edge` writes it at each start) is read from its file on
the same beat, without the database: a request never reads the file while the thread runs.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import connection

from domains.dns import hostnames
from domains.edge import version
from domains.edge.certificates import NO_CERTIFICATE, Answer, look_up
from domains.edge.paths import SECRET_FILE

logger = logging.getLogger(__name__)

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
        self.fresh_for = fresh_for
        self._lock = threading.Lock()  # the entries and the version
        self._reading = threading.Lock()  # one version read at a time
        self._version: int | None = None
        self._version_read_at = -math.inf  # time.monotonic() when that read started
        self._secret = ""
        self._secret_read_at = -math.inf
        self._served: dict[str, _Entry] = {}
        self._unknown: OrderedDict[str, _Entry] = OrderedDict()
        self._poller_pid: int | None = None

    # --- The version and the secret -------------------------------------------------

    def _stale(self, read_at: float) -> bool:
        return time.monotonic() - read_at >= self.fresh_for

    def read_version(self) -> None:
        """Read the version; on a change, drop every answer."""
        with self._reading:
            started = time.monotonic()
            current = version.current()
            with self._lock:
                if current != self._version:
                    self._served.clear()
                    self._unknown.clear()
                    self._version = current
                self._version_read_at = started

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
        self.read_version()

    def secret(self) -> str:
        """This edge run's secret; empty before `manage.py edge` wrote it."""
        if self._stale(self._secret_read_at):
            self.read_secret()
        return self._secret

    # --- Answers ----------------------------------------------------------------------

    def answer(self, server_name: str) -> Answer:
        """The endpoint's answer for a name a client sent in its handshake."""
        name = hostnames.comparable(server_name)
        if not name:
            return NO_CERTIFICATE
        if self._stale(self._version_read_at):
            with self._reading:
                pass  # a read under way: wait for it rather than start another
            if self._stale(self._version_read_at):
                self.read_version()
        now = time.time()
        with self._lock:
            entry = self._served.get(name) or self._unknown.get(name)
            if entry is not None and now < entry.until:
                if entry.answer.bundle is None:
                    self._unknown.move_to_end(name)
                return entry.answer
            read_under = self._version
        answer = look_up(name)
        until = now + MAX_AGE
        if answer.expires is not None:
            until = min(until, answer.expires.timestamp())
        with self._lock:
            if self._version == read_under:  # else a change came during the read: not kept
                self._keep(name, _Entry(answer, until))
        return answer

    def _keep(self, name: str, entry: _Entry) -> None:
        self._served.pop(name, None)
        self._unknown.pop(name, None)
        if entry.answer.bundle is not None:
            self._served[name] = entry
            return
        self._unknown[name] = entry
        while len(self._unknown) > UNKNOWN_NAMES:
            self._unknown.popitem(last=False)

    # --- The thread -------------------------------------------------------------------

    def keep_fresh(self) -> None:
        """Start this process's thread, once (a forked process starts its own)."""
        pid = os.getpid()
        with self._lock:
            if self._poller_pid == pid:
                return
            self._poller_pid = pid
        threading.Thread(target=self._poll, name="edge-version", daemon=True).start()

    def _poll(self) -> None:
        failing = False
        while True:
            started = time.monotonic()
            try:
                self.refresh()
                failing = False
            except Exception:
                # Requests then read the version themselves, and fail as the database does.
                if not failing:
                    logger.exception("The edge version could not be read")
                failing = True
                with contextlib.suppress(Exception):
                    connection.close()  # this thread's own; a new one at the next beat
            time.sleep(max(0.0, POLL_EVERY - (time.monotonic() - started)))
