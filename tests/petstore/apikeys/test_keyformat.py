"""The key format: `pst_<prefix>_<secret><checksum>`, the checksum a CRC32 of the random part
in base62, which the scanner snippet in docs/decisions/access.md verifies offline (run here,
as written there); keys issued before the checksum are still read."""

from __future__ import annotations

import re
import secrets
import string
import zlib
from pathlib import Path

import pytest

from petstore.apikeys.keyformat import checksum, generate_key, parse_key

DOC = Path(__file__).resolve().parents[3] / "docs" / "decisions" / "access.md"


def scanner():
    """The `petstore_keys` function of the doc's "Key format" section, as written there."""
    section = DOC.read_text().split("## Key format", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code, "the Key format section shows the scanner's code"
    namespace: dict = {}
    exec(code[1], namespace)  # noqa: S102 - our own documentation's snippet
    return namespace["petstore_keys"]


def mistyped(key: str, at: int) -> str:
    alphabet = string.digits + string.ascii_letters
    return key[:at] + next(c for c in alphabet if c != key[at]) + key[at + 1 :]


def test_a_key_is_the_scheme_its_prefix_256_random_bits_and_a_checksum():
    prefix, key = generate_key()
    assert re.fullmatch(r"pst_[0-9a-f]{8}_[0-9A-Za-z]{43}[0-9A-Za-z]{6}", key)
    assert key.startswith(f"pst_{prefix}_") and len(key) == 62
    assert key[-6:] == checksum(key[4:-6])
    parsed = parse_key(key)
    assert parsed is not None and parsed.prefix == prefix


def test_the_checksum_is_crc32_in_base62_left_padded():
    assert checksum("") == "000000"  # CRC32 of nothing is 0
    assert checksum("a") == "4GEHKN"  # CRC32 0xE8B7BE43 = 3904355907 = 4·62⁵ + 16·62⁴ + …
    digits = string.digits + string.ascii_uppercase + string.ascii_lowercase
    value = 0
    for character in checksum("deadbeef_" + "z" * 43):
        value = value * 62 + digits.index(character)
    assert value == zlib.crc32(("deadbeef_" + "z" * 43).encode())


def test_the_documented_scanner_finds_issued_keys_and_no_noise():
    find = scanner()
    keys = [generate_key()[1] for _ in range(50)]
    text = " ".join(keys) + " pst_deadbeef_" + "x" * 49 + " " + mistyped(keys[0], 20)
    assert find(text) == keys


@pytest.mark.parametrize("at", [4, 11, 13, 40, 55, 56, 61])
def test_one_mistyped_character_is_refused(at):
    _, key = generate_key()
    assert parse_key(mistyped(key, at)) is None


def test_random_noise_of_the_shape_is_refused_nearly_always():
    noise = [
        f"pst_{secrets.token_hex(4)}_"
        + "".join(secrets.choice(string.digits + string.ascii_letters) for _ in range(49))
        for _ in range(2000)
    ]
    assert sum(parse_key(n) is not None for n in noise) == 0  # 1 in 2**32 passes


def test_a_key_issued_before_the_checksum_is_still_read():
    legacy = "pst_0a1b2c3d_" + secrets.token_urlsafe(32)
    parsed = parse_key(legacy)
    assert parsed is not None and parsed.prefix == "0a1b2c3d"
    for other in (
        "pst_0a1b2c3d_" + "A" * 42,
        "pst_0a1b2c3d_" + "A" * 44,
        "pst_0A1B2C3D_" + "A" * 43,
    ):
        assert parse_key(other) is None
