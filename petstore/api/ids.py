"""A row id in a /v1 path: a decimal int64, or no id at all.

Routes take ids as `<str:...>` and the view checks them here, so that an id that is not an
int64 (`abc`, `-1`, `2^63`) is the same 404 as an id nobody has, in the operation's own
words and with its own headers (getPet's deprecation fields), and never reaches PostgreSQL,
which would refuse a bigint out of range (a 500). A path converter would send such a path to
the catch-all 404 of /v1 instead, a different answer.
"""

from __future__ import annotations

import re

INT64_MAX = 2**63 - 1
_DIGITS = re.compile(r"[0-9]{1,19}")


def int64(raw: str) -> int | None:
    """The id `raw` spells in decimal, None when it is not one from 0 to INT64_MAX."""
    if _DIGITS.fullmatch(raw) is None or int(raw) > INT64_MAX:
        return None
    return int(raw)
