"""One process's reads of a version: now, or fresh within a bound, with a polling thread."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable

from django.db import connection

from petstore.versions.declaration import Stamp, Version

logger = logging.getLogger(__name__)


class Watcher:
    """One process's reads of a version, under either of two contracts:

    - `read()`: now, for a reader that must see every change committed before it began;
    - `fresh()`: the stamp read less than `fresh_for` seconds ago, read now past that; with
      `keep_fresh`, a thread reads it on a beat, so a change committed at t is seen from
      t + `fresh_for` at the latest, and usually within a beat (the edge's cache).

    `latest()` is the newest stamp read (by start), which a keeper checks after reading its
    rows: a read that overlapped a change is then not kept."""

    def __init__(self, version: Version, *, fresh_for: float = 0.0) -> None:
        self.version = version
        self.fresh_for = fresh_for
        self._lock = threading.Lock()  # the newest read
        self._reading = threading.Lock()  # one `fresh()` read at a time
        self._newest: tuple[float, Stamp] | None = None  # (time.monotonic() at its start, it)
        self._poller_pid: int | None = None

    def read(self) -> Stamp:
        started = time.monotonic()
        stamp = self.version.read()
        with self._lock:
            if self._newest is None or started >= self._newest[0]:
                self._newest = (started, stamp)
        return stamp

    def latest(self) -> Stamp | None:
        newest = self._newest
        return None if newest is None else newest[1]

    def _fresh(self) -> Stamp | None:
        newest = self._newest
        if newest is None or time.monotonic() - newest[0] >= self.fresh_for:
            return None
        return newest[1]

    def fresh(self) -> Stamp:
        stamp = self._fresh()
        if stamp is None:
            with self._reading:  # a read under way: wait for it rather than start another
                stamp = self._fresh() or self.read()
        return stamp

    def keep_fresh(self, every: float, *, also: Callable[[], object] = lambda: None) -> None:
        """Start this process's thread, once (a forked process starts its own): every `every`
        seconds it runs `also`, then reads the version."""
        pid = os.getpid()
        with self._lock:
            if self._poller_pid == pid:
                return
            self._poller_pid = pid
        name = f"{self.version.table}-watcher"
        threading.Thread(target=self._poll, args=(every, also), name=name, daemon=True).start()

    def _poll(self, every: float, also: Callable[[], object]) -> None:
        failing = False
        while True:
            started = time.monotonic()
            try:
                also()
                self.read()
                failing = False
            except Exception:
                # Readers then read the version themselves, and fail as the database does.
                if not failing:
                    logger.exception("%s could not be read", self.version.table)
                failing = True
                with contextlib.suppress(Exception):
                    connection.close()  # this thread's own; a new one at the next beat
            time.sleep(max(0.0, every - (time.monotonic() - started)))
