"""API key format: `pst_<prefix>_<secret>`.

The prefix (8 hex characters) is stored in clear: it names the key to people
and addresses the lookup cache. Only a SHA-256 of the whole key is stored, and
indexed: a request finds its row by the hash of the key it sends, so a real
prefix with a wrong secret misses exactly as an unknown prefix does. A key
carries 256 random bits, so a fast hash is enough (a slow password hash would
only add latency to every request), and a cached row's hash is compared in
constant time.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

KEY_SCHEME = "pst"
PREFIX_LENGTH = 8


@dataclass(frozen=True)
class ParsedKey:
    prefix: str
    full: str


def generate_key() -> tuple[str, str]:
    """A new (prefix, plaintext key)."""
    prefix = secrets.token_hex(PREFIX_LENGTH // 2)
    return prefix, f"{KEY_SCHEME}_{prefix}_{secrets.token_urlsafe(32)}"


def hash_key(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode("utf-8")).hexdigest()


def parse_key(token: str) -> ParsedKey | None:
    """The parts of a well-formed key, or None."""
    scheme, sep, rest = token.partition("_")
    prefix, sep2, secret = rest.partition("_")
    if scheme != KEY_SCHEME or not sep or not sep2 or len(prefix) != PREFIX_LENGTH:
        return None
    if not secret or not all(c in "0123456789abcdef" for c in prefix):
        return None
    return ParsedKey(prefix=prefix, full=token)
