"""Private keys at rest: sealed with Fernet under a key of their own.

Each Fernet key is derived (HKDF-SHA256) from DOMAINS_KEY_ENCRYPTION_KEY, never
from SECRET_KEY: rotating the one must not make the other's data unreadable,
and a leaked SECRET_KEY must not open the certificates' keys. Rotation: a
MultiFernet seals with the current key and opens with it or any key of
DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS, until `manage.py resealkeys` has sealed
everything again under the current one.

Only the worker and the edge (and `resealkeys`) hold the key; any other
process that reaches here gets KeyNotSet, in one line that says what to do.
"""

from __future__ import annotations

import base64
import functools

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

# Binds the derived key to this use: the same setting could key something else one day.
PURPOSE = b"petstore domains: private keys at rest"
PEM_START = "-----BEGIN"

__all__ = [
    "InvalidToken",
    "KeyNotSet",
    "is_current",
    "is_sealed",
    "new_key",
    "pem",
    "require_key",
    "reseal",
    "seal",
    "unseal",
]


class KeyNotSet(ImproperlyConfigured):
    """This process has no DOMAINS_KEY_ENCRYPTION_KEY: it may neither seal nor open a key."""


def missing_key_message() -> str:
    why = "the worker and the edge open and seal private keys with it"
    if settings.DEBUG:  # development: where a checkout keeps its key
        why += "; `make run` writes one into var/local.env, named by PETSTORE_ENV_FILE"
    return (
        f"DOMAINS_KEY_ENCRYPTION_KEY is not set ({why}); "
        f"make one with: {settings.KEY_ENCRYPTION_KEY_RECIPE}"
    )


@functools.lru_cache(maxsize=8)
def _fernet(secret: str) -> Fernet:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=PURPOSE)
    return Fernet(base64.urlsafe_b64encode(derived.derive(secret.encode())))


def require_key() -> None:
    """KeyNotSet unless this process holds DOMAINS_KEY_ENCRYPTION_KEY."""
    if not settings.DOMAINS_KEY_ENCRYPTION_KEY:
        raise KeyNotSet(missing_key_message())


def _current() -> Fernet:
    require_key()
    return _fernet(settings.DOMAINS_KEY_ENCRYPTION_KEY)


def fernet() -> MultiFernet:
    """Seals with the current key; opens with it or any previous one."""
    previous = [_fernet(secret) for secret in settings.DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS]
    return MultiFernet([_current(), *previous])


def seal(key_pem: str) -> str:
    return fernet().encrypt(key_pem.encode()).decode()


def unseal(sealed: str) -> str:
    """The PEM back; InvalidToken when neither DOMAINS_KEY_ENCRYPTION_KEY nor a previous key
    is the one it was sealed with."""
    return fernet().decrypt(sealed.encode()).decode()


def is_current(sealed: str) -> bool:
    """Whether `sealed` opens with the current key alone (nothing to reseal)."""
    try:
        _current().decrypt(sealed.encode())
    except InvalidToken:
        return False
    return True


def reseal(sealed: str) -> str:
    """`sealed` sealed again under the current key; InvalidToken when no key opens it."""
    return fernet().rotate(sealed.encode()).decode()


def is_sealed(value: str) -> bool:
    return not value.lstrip().startswith(PEM_START)


def new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def pem(key: ec.EllipticCurvePrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
