"""Files under DOMAINS_CA_DIR that hold secrets: written atomically, created once.

Creation is race-safe across processes (web, several workers): an exclusive
flock on a lock file serialises creators, files are written to a temporary
name and renamed into place, and whoever finds them already there loads them
instead.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from django.conf import settings


def directory() -> Path:
    path = Path(settings.DOMAINS_CA_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_atomically(path: Path, data: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def create_once(done: Path, lock_name: str, create: Callable[[], None]) -> None:
    """Run `create` unless `done` exists, at most once across processes."""
    if done.exists():
        return
    with open(done.parent / lock_name, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not done.exists():  # someone may have created it while we waited
                create()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
