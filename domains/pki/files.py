"""Files under DOMAINS_CA_DIR (the local CA's certificate) and the edge's own, written
atomically: to a temporary name, then renamed into place, so a reader never sees half of
one. No key is kept on a disk: domains/pki/platformkeys.py.
"""

from __future__ import annotations

import os
import tempfile
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
