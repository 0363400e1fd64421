"""Private keys at rest: sealed with Fernet under a key of their own.

The Fernet key is derived (HKDF-SHA256) from DOMAINS_KEY_ENCRYPTION_KEY, never
from SECRET_KEY: rotating the one must not make the other's data unreadable,
and a leaked SECRET_KEY must not open the certificates' keys.
"""

from __future__ import annotations

import base64

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

# Binds the derived key to this use: the same setting could key something else one day.
PURPOSE = b"petstore domains: private keys at rest"
PEM_START = "-----BEGIN"

__all__ = ["InvalidToken", "is_sealed", "new_key", "pem", "seal", "unseal"]


def fernet() -> Fernet:
    secret = settings.DOMAINS_KEY_ENCRYPTION_KEY.encode()
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=PURPOSE).derive(secret)
    return Fernet(base64.urlsafe_b64encode(derived))


def seal(key_pem: str) -> str:
    return fernet().encrypt(key_pem.encode()).decode()


def unseal(sealed: str) -> str:
    """The PEM back; InvalidToken when DOMAINS_KEY_ENCRYPTION_KEY is not the one it was
    sealed with."""
    return fernet().decrypt(sealed.encode()).decode()


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
