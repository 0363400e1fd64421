"""A backup sealed with a passphrase, streamed: a dump of any size is sealed and opened in
chunks, never held in memory whole (Fernet, which seals the private keys, is one token).

The format is age's STREAM construction with AES-256-GCM (cryptography's AESGCM): a header
(the format's name and a random salt), then the plaintext in chunks of 64 KiB, each sealed
under the key scrypt derives from the passphrase and the salt, with a nonce of the chunk's
number and a flag on the last one, and the header as associated data. A chunk changed,
dropped, moved or cut off, or a header changed, fails to open (`SealError`), as does a wrong
passphrase; nothing opened is written before its chunk checked out.
"""

from __future__ import annotations

import os
from typing import IO

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

MAGIC = b"petstore-sealed-backup/1 aes-256-gcm scrypt\n"
SALT_BYTES = 16
CHUNK = 64 * 1024
TAG_BYTES = 16
# scrypt's cost: about 100 ms and 32 MiB once a file, against guessing the passphrase.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**15, 8, 1
MIN_PASSPHRASE = 16


class SealError(Exception):
    """The file is not a sealed backup, or not one this passphrase opens, or was altered."""


def read_passphrase(path: str) -> bytes:
    """The passphrase in the file at `path`: its first line, at least 16 characters."""
    try:
        with open(path, "rb") as file:
            lines = file.read().splitlines()
    except OSError as exc:
        raise SealError(f"Cannot read the passphrase file {path} ({exc})") from None
    passphrase = lines[0] if lines else b""
    if len(passphrase) < MIN_PASSPHRASE:
        raise SealError(
            f"The passphrase in {path} has fewer than {MIN_PASSPHRASE} characters: "
            "make one with `openssl rand -base64 32`."
        )
    return passphrase


def _key(passphrase: bytes, salt: bytes) -> AESGCM:
    derived = Scrypt(salt=salt, length=32, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P).derive(passphrase)
    return AESGCM(derived)


def _nonce(counter: int, last: bool) -> bytes:
    return counter.to_bytes(11, "big") + (b"\x01" if last else b"\x00")


def _chunks(source: IO[bytes], size: int):
    """(chunk, is_last) for every `size`-byte chunk of `source`; one empty chunk when empty."""
    chunk = source.read(size)
    while True:
        following = source.read(size)
        yield chunk, not following
        if not following:
            return
        chunk = following


def seal(source: IO[bytes], target: IO[bytes], passphrase: bytes) -> None:
    """Everything `source` gives, sealed into `target`."""
    salt = os.urandom(SALT_BYTES)
    header = MAGIC + salt
    key = _key(passphrase, salt)
    target.write(header)
    for counter, (chunk, last) in enumerate(_chunks(source, CHUNK)):
        target.write(key.encrypt(_nonce(counter, last), chunk, header))


def open_sealed(source: IO[bytes], target: IO[bytes], passphrase: bytes) -> None:
    """The plaintext of the sealed `source`, into `target`."""
    magic = source.read(len(MAGIC))
    if magic != MAGIC:
        raise SealError("Not a sealed backup (its first line is not the format's name).")
    salt = source.read(SALT_BYTES)
    header = magic + salt
    key = _key(passphrase, salt)
    for counter, (chunk, last) in enumerate(_chunks(source, CHUNK + TAG_BYTES)):
        try:
            target.write(key.decrypt(_nonce(counter, last), chunk, header))
        except InvalidTag:
            raise SealError(
                f"Chunk {counter} does not open: a wrong passphrase, or a file altered or "
                "cut short."
            ) from None
