"""Log formatters: one JSON object per line for log shippers, or plain text; in both,
one record is one line, whatever text a client managed to put into it.

A request path, a header or a username reaches the logs (`Refused GET /v1/pets/1
...`); a newline in it (`%0A`) would start a forged line in a plain-text log. So
control characters (C0, DEL, C1, the Unicode line and paragraph separators) and
lone surrogates are written as Python escapes (`\\n`, `\\x1b`, `\\u2028`), in the
message of both formats. Tracebacks keep their own lines.
"""

from __future__ import annotations

import datetime as dt
import json
import logging

_ESCAPED = [*range(0x00, 0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, *range(0xD800, 0xE000)]
_ESCAPES = {code: repr(chr(code))[1:-1] for code in _ESCAPED}

# Attributes every LogRecord has; anything else was passed with `extra=` and is kept.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


def one_line(text: str) -> str:
    """`text` with every control character written as an escape: never more than one line."""
    return text.translate(_ESCAPES)


class PlainFormatter(logging.Formatter):
    def formatMessage(self, record: logging.LogRecord) -> str:
        return one_line(super().formatMessage(record))


class JSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": dt.datetime.fromtimestamp(record.created, tz=dt.UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": one_line(record.getMessage()),
        }
        entry.update(
            {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}
        )
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)
