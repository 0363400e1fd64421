"""Every private key the platform keeps sealed: certificates' and ACME orders' (rows), the
local CA's and the ACME account's (files under DOMAINS_CA_DIR).

`unopenable()` is what the worker, the edge and `manage.py check` ask at start-up, so a
wrong DOMAINS_KEY_ENCRYPTION_KEY stops them in one line instead of failing every
handshake; `reseal_all()` is `manage.py resealkeys`, after a rotation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from domains.models import AcmeOrder, Certificate
from domains.pki import keys
from domains.pki.acme import ACCOUNT_KEY_FILE
from domains.pki.files import write_atomically
from domains.pki.local import KEY_FILE as CA_KEY_FILE

SEALED_ROWS = (Certificate, AcmeOrder)


def sealed_files() -> list[Path]:
    """The sealed key files that exist (none is created here)."""
    directory = Path(settings.DOMAINS_CA_DIR)
    return [
        path for path in (directory / CA_KEY_FILE, directory / ACCOUNT_KEY_FILE) if path.exists()
    ]


def unopenable() -> str | None:
    """What the configured keys cannot open, one of each kind tried (the newest row), or
    None. Raises keys.KeyNotSet when this process has no key, even with nothing stored yet:
    the worker and the edge need one for what they will seal and open."""
    keys.require_key()
    for model in SEALED_ROWS:
        row = model.objects.order_by("-pk").only("key_pem").first()
        if row is not None and not _opens(row.key_pem):
            return f"the private key of {model.__name__} {row.pk}"
    for path in sealed_files():
        if not _opens(path.read_text()):
            return str(path)
    return None


def _opens(sealed: str) -> bool:
    try:
        keys.unseal(sealed)
    except keys.InvalidToken:
        return False
    return True


@dataclass
class Resealed:
    resealed: int = 0
    current: int = 0


def reseal_all() -> Resealed:
    """Seals every stored key again under the current key; one already under it is left as
    it is, so a second run reseals nothing. keys.InvalidToken when no configured key opens
    one (nothing after it is touched)."""
    keys.require_key()
    counts = Resealed()
    for model in SEALED_ROWS:
        for pk, sealed in model.objects.order_by("pk").values_list("pk", "key_pem").iterator():
            if keys.is_current(sealed):
                counts.current += 1
                continue
            # Conditional: a row written meanwhile (a renewal) is already under the new key.
            model.objects.filter(pk=pk, key_pem=sealed).update(key_pem=keys.reseal(sealed))
            counts.resealed += 1
    for path in sealed_files():
        sealed = path.read_text()
        if keys.is_current(sealed):
            counts.current += 1
            continue
        write_atomically(path, keys.reseal(sealed).encode(), 0o600)
        counts.resealed += 1
    return counts


def key_problem() -> str | None:
    """One line saying why this process cannot open the stored keys, or None."""
    try:
        what = unopenable()
    except keys.KeyNotSet as error:
        return str(error)
    if what is None:
        return None
    return (
        f"DOMAINS_KEY_ENCRYPTION_KEY cannot open {what}: set the key that sealed it, or "
        "put that key in DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS and run manage.py resealkeys"
    )
