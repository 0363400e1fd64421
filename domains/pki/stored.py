"""Every private key the platform keeps, sealed, in rows: certificates', ACME orders' and
the platform's own (PlatformKey: the local CA's, the ACME account's).

`unopenable()` is what the worker, the edge and `manage.py check` ask at start-up, so a
wrong DOMAINS_KEY_ENCRYPTION_KEY stops them in one line instead of failing every
handshake; `reseal_all()` is `manage.py resealkeys`, after a rotation.
"""

from __future__ import annotations

from dataclasses import dataclass

from domains.models import AcmeOrder, Certificate, PlatformKey
from domains.pki import sealing

SEALED_ROWS = (Certificate, AcmeOrder, PlatformKey)


def unopenable() -> str | None:
    """What the configured keys cannot open, one of each kind tried (the newest row; every
    PlatformKey), or None. Raises sealing.KeyNotSet when this process has no key, even with
    nothing stored yet: the worker and the edge need one for what they will seal and open."""
    sealing.require_key()
    for model in SEALED_ROWS:
        rows = model.objects.order_by("-pk").values_list("pk", "key_pem")
        for pk, sealed in rows if model is PlatformKey else rows[:1]:
            if not _opens(sealed):
                name = PlatformKey.objects.get(pk=pk).use if model is PlatformKey else pk
                return f"the private key of {model.__name__} {name}"
    return None


def _opens(sealed: str) -> bool:
    try:
        sealing.unseal(sealed)
    except sealing.InvalidToken:
        return False
    return True


@dataclass
class Resealed:
    resealed: int = 0
    current: int = 0


def reseal_all() -> Resealed:
    """Seals every stored key again under the current key; one already under it is left as
    it is, so a second run reseals nothing. sealing.InvalidToken when no configured key opens
    one (nothing after it is touched)."""
    sealing.require_key()
    counts = Resealed()
    for model in SEALED_ROWS:
        for pk, sealed in model.objects.order_by("pk").values_list("pk", "key_pem").iterator():
            if sealing.is_current(sealed):
                counts.current += 1
                continue
            # Conditional: a row written meanwhile (a renewal) is already under the new key.
            model.objects.filter(pk=pk, key_pem=sealed).update(key_pem=sealing.reseal(sealed))
            counts.resealed += 1
    return counts


def key_problem() -> str | None:
    """One line saying why this process cannot open the stored keys, or None."""
    try:
        what = unopenable()
    except sealing.KeyNotSet as error:
        return str(error)
    if what is None:
        return None
    return (
        f"DOMAINS_KEY_ENCRYPTION_KEY cannot open {what}: set the key that sealed it, or "
        "put that key in DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS and run manage.py resealkeys"
    )
