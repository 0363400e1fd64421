"""Zone files for the development DNS server, read record by record.

dnspython's zone reader refuses a CNAME beside other data at the same name
(rightly, for a real zone). The development server must serve exactly that
broken set-up, because it is what owners get wrong ("an A record conflicts
with the CNAME"). So the file is read here line by line: `$ORIGIN` and `$TTL`
directives, `@`, blank owners (the previous owner again), `;` comments and
parenthesised multi-line records are handled; each record is parsed by
dnspython itself (`dns.zonefile.read_rrsets`), which checks nothing across
records.
"""

from __future__ import annotations

import dns.exception
import dns.name
import dns.rrset
import dns.ttl
import dns.zonefile

DEFAULT_TTL = 300


def _logical_lines(text: str):
    """Lines without comments, with parenthesised records joined into one."""
    pending = ""
    for raw in text.splitlines():
        line = raw.split(";", 1)[0].rstrip()
        if not line.strip() and not pending:
            continue
        pending = f"{pending} {line.strip()}" if pending else line
        if pending.count("(") > pending.count(")"):
            continue
        yield pending.replace("(", " ").replace(")", " ")
        pending = ""
    if pending:
        raise dns.exception.SyntaxError("unbalanced parentheses at end of file")


def read_zone_file(text: str, origin: str) -> list[dns.rrset.RRset]:
    """Every record of a zone file, names made absolute; CNAME beside other data allowed."""
    current = dns.name.from_text(origin if origin.endswith(".") else origin + ".")
    ttl = DEFAULT_TTL
    owner = "@"
    rrsets: list[dns.rrset.RRset] = []
    for line in _logical_lines(text):
        if line.startswith("$"):
            directive, _, value = line.partition(" ")
            if directive.upper() == "$ORIGIN":
                current = dns.name.from_text(value.strip(), current)
            elif directive.upper() == "$TTL":
                ttl = int(dns.ttl.from_text(value.strip()))
            else:
                raise dns.exception.SyntaxError(f"unsupported directive {directive}")
            continue
        if line[0].isspace():  # no owner: the previous one again
            line = owner + line
        else:
            owner = line.split(None, 1)[0]
        rrsets += dns.zonefile.read_rrsets(
            line, rdclass=None, origin=current, default_ttl=ttl, relativize=False
        )
    return rrsets
