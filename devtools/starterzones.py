"""The development DNS server's starter zones: the platform's own names, and the customer zone
of the newcomer's walk-throughs: the dashboard's name (docs/dashboard.md), whose CNAME waits to
be uncommented, and the domains API name of docs/getting-started.md, whose CNAME is there
from the start.

Both `manage.py devdns` and `manage.py loaddomainsdemo` write them, whichever starts first under
`make run`: each file only where it is missing, so a newcomer's edits are never overwritten and
the two never disagree about what the walk-through finds.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings

DEMO_ZONE = "example.test"
# The name the dashboard walk-through adds and the HTTPS hint names.
DEMO_DOMAIN = f"shop.{DEMO_ZONE}"
# The name Getting started's domains API lines add: another name, so the dashboard walk-through
# still finds its own name free, and served from the start, so those lines' check passes.
API_DEMO_DOMAIN = f"api.{DEMO_ZONE}"

PLATFORM_ZONE = """\
; The platform's own names, served by `python manage.py devdns`: the CNAME target is this machine.
$ORIGIN {zone}.
$TTL 60
@        IN SOA ns1 hostmaster 1 7200 900 1209600 60
@        IN NS  ns1
ns1      IN A   127.0.0.1
{target}. IN A  127.0.0.1
"""

DEMO_ZONE_TEXT = """\
; Development DNS zone for {zone}, served by `python manage.py devdns` (re-read on change).
; Walk-through: docs/dashboard.md.
$ORIGIN {zone}.
$TTL 60
@       IN SOA ns1.{zone}. hostmaster.{zone}. 1 3600 600 86400 60
@       IN NS  ns1.{zone}.
ns1     IN A   127.0.0.1

; Getting started's domains API example adds api.{zone}: its record is here already.
api     IN CNAME {target}.

; 1. After "Add domain" for shop.{zone}, add the record the dashboard shows
;    (remove the leading "; "), save, and choose Verify:
; shop  IN CNAME {target}.
;
; 2. To see failure messages: a conflicting A record, beside the CNAME or
;    in its place,
; shop  IN A     192.0.2.10
;    or, instead of the right CNAME, one pointing somewhere else.
; shop  IN CNAME elsewhere.example.net.
"""


def starter_zones() -> dict[str, str]:
    """Zone origin -> zone file text, for this platform's settings."""
    target = settings.PLATFORM_CNAME_TARGET.rstrip(".")
    return {
        settings.PLATFORM_DOMAIN: PLATFORM_ZONE.format(
            zone=settings.PLATFORM_DOMAIN, target=target
        ),
        DEMO_ZONE: DEMO_ZONE_TEXT.format(zone=DEMO_ZONE, target=target),
    }


def write_starter_zones(directory: Path) -> list[Path]:
    """Write each starter zone that is missing from `directory`; returns the ones written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for origin, text in starter_zones().items():
        path = directory / f"{origin}.zone"
        try:
            # O_EXCL: of two processes starting together, one writes and the other leaves it.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            continue
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        written.append(path)
    return written


def demo_zone_file(directory: Path) -> Path:
    return directory / f"{DEMO_ZONE}.zone"
