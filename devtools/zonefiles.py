"""Zone files for the development DNS server, read by dnspython's own zone parser.

dnspython's tokenizer handles everything a zone file may hold: quoted strings
(a DMARC TXT's `;` or a CAA's parameters), comments, parenthesised multi-line
records, `$ORIGIN` and `$TTL`; its errors name the file and the line.

One thing is changed: a real zone refuses a CNAME beside other data at the same
name, but the development server must serve exactly that broken set-up, because
it is what owners get wrong ("an A record conflicts with the CNAME"). The reader
checks that through the transaction it writes into (`check_put_rdataset`); the
transaction here registers no such check, and keeps every record as read.
"""

from __future__ import annotations

import dns.name
import dns.rdataclass
import dns.rrset
import dns.tokenizer
import dns.zonefile

# Records without a TTL and no `$TTL` before them.
DEFAULT_TTL = 300


class LineTracking(dns.tokenizer.Tokenizer):
    """Errors name the line of the last token read. The reader reports an error once
    it has read the end of the bad record, where the tokenizer's own line count
    already points at the next line."""

    token_line = 1

    def skip_whitespace(self) -> int:
        skipped = super().skip_whitespace()
        self.token_line = self.line_number  # the next token starts on this line
        return skipped

    def where(self) -> tuple[str, int]:
        return self.filename, self.token_line


class KeepEverything(dns.zonefile.RRsetsReaderTransaction):
    """Collects the records read without cross-record checks (CNAME beside other data)."""

    def check_put_rdataset(self, check) -> None:
        return None


class RRsetsReader(dns.zonefile.RRSetsReaderManager):
    def writer(self, replacement: bool = False) -> KeepEverything:
        return KeepEverything(self, True, False)


def read_zone_file(text: str, origin: str, *, filename: str = "") -> list[dns.rrset.RRset]:
    """Every record of a zone file, names absolute; CNAME beside other data allowed.

    Raises dns.exception.SyntaxError as `<filename>:<line>: <what>` (the filename
    defaults to `<origin>.zone`, the name the server reads it from).
    """
    manager = RRsetsReader(dns.name.from_text(origin, dns.name.root), relativize=False)
    tokenizer = LineTracking(text, filename or f"{origin}.zone")
    with manager.writer() as txn:
        dns.zonefile.Reader(
            tokenizer, dns.rdataclass.IN, txn, allow_include=False, default_ttl=DEFAULT_TTL
        ).read()
    return manager.rrsets
