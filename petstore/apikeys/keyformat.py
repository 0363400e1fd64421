"""API key format: `pst_<prefix>_<secret><checksum>`.

- `pst_`: the scheme, so a key is recognisable wherever it is pasted;
- `<prefix>`: 8 hex characters, stored in clear: it names the key to people and addresses
  the lookup cache;
- `<secret>`: 43 base62 characters, 256 random bits;
- `<checksum>`: 6 base62 characters, the CRC32 of `<prefix>_<secret>` (the key's random
  part), written in base62 and left-padded with `0`.

The checksum lets anyone (a secret scanner, a pre-commit hook, this service) tell a real
key from noise offline, as GitHub's token format does: a string of this shape whose
checksum does not match was never issued, and `parse_key` refuses it before anything is
looked up. It is no secret and proves nothing about the key's validity.

Keys issued before the checksum (`pst_<prefix>_<43 base64url characters>`) are still read:
they all end by the expiry migration apikeys.0007 gave them.

Only a SHA-256 of the whole key is stored, and indexed: a request finds its row by the hash
of the key it sends, so a real prefix with a wrong secret misses exactly as an unknown
prefix does. A key carries 256 random bits, so a fast hash is enough (a slow password hash
would only add latency to every request), and a cached row's hash is compared in constant
time. docs/decisions/access.md ("Key format") documents this for the people who scan.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import string
import zlib
from dataclasses import dataclass

KEY_SCHEME = "pst"
PREFIX_LENGTH = 8
BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
SECRET_LENGTH = 43  # 43 base62 characters: 256 bits
CHECKSUM_LENGTH = 6  # 62**6 > 2**32: any CRC32
_DIGIT = {character: value for value, character in enumerate(BASE62)}
# Each request's key is read with one regular expression (the checksum's arithmetic after it
# is a few microseconds: docs/decisions/access.md, "Key format").
_KEY = re.compile(
    rf"{KEY_SCHEME}_(([0-9a-f]{{{PREFIX_LENGTH}}})_[0-9A-Za-z]{{{SECRET_LENGTH}}})"
    rf"([0-9A-Za-z]{{{CHECKSUM_LENGTH}}})"
)
# A key issued before the checksum: its secret is secrets.token_urlsafe(32).
_LEGACY_KEY = re.compile(rf"{KEY_SCHEME}_([0-9a-f]{{{PREFIX_LENGTH}}})_[0-9A-Za-z_-]{{43}}")


@dataclass(frozen=True)
class ParsedKey:
    prefix: str
    full: str


def checksum(random_part: str) -> str:
    """The 6 base62 characters that end a key whose random part is `random_part`."""
    value = zlib.crc32(random_part.encode("ascii"))
    digits = []
    for _ in range(CHECKSUM_LENGTH):
        value, digit = divmod(value, 62)
        digits.append(BASE62[digit])
    return "".join(reversed(digits))


def generate_key() -> tuple[str, str]:
    """A new (prefix, plaintext key)."""
    prefix = secrets.token_hex(PREFIX_LENGTH // 2)
    secret = "".join(secrets.choice(BASE62) for _ in range(SECRET_LENGTH))
    return prefix, f"{KEY_SCHEME}_{prefix}_{secret}{checksum(f'{prefix}_{secret}')}"


def hash_key(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode("utf-8")).hexdigest()


def parse_key(token: str) -> ParsedKey | None:
    """The parts of a well-formed key, or None: a key whose checksum does not match is
    not well formed (nothing is looked up for it)."""
    if (found := _KEY.fullmatch(token)) is not None:
        random_part, prefix, sent = found.groups()
        value = 0
        for character in sent:
            value = value * 62 + _DIGIT[character]
        if value != zlib.crc32(random_part.encode("ascii")):
            return None
        return ParsedKey(prefix=prefix, full=token)
    if (legacy := _LEGACY_KEY.fullmatch(token)) is not None:
        return ParsedKey(prefix=legacy[1], full=token)
    return None
