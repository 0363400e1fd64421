"""The platform's own private keys, in the database (PlatformKey): the ACME account's and the
local CA's, with its certificate.

In a row, not on one host's disk: certificates workers on any number of hosts sign with
the same ACME account (so any of them resumes an order another placed), and a worker
restarted on an empty disk (a PaaS, a new container) registers no new account. Each is
created once, by whichever process needs it first; the unique `use` settles a race (the
loser reads the winner's row).

Nothing under DOMAINS_CA_DIR is read and nothing there must survive: it holds only a copy
of the local CA's certificate for `make run`'s hints (domains/pki/local.py
`root_certificate_path`), written again from the row when it differs.
"""

from __future__ import annotations

from collections.abc import Callable

from domains.choices import PlatformKeyUse
from domains.models import PlatformKey

# A new key: its sealed PEM and, for a CA, its certificate's PEM.
Creator = Callable[[], tuple[str, str]]


def held(use: PlatformKeyUse, create: Creator) -> PlatformKey:
    """The platform's key for `use`: its row, else a new one from `create`."""
    found = PlatformKey.objects.filter(use=use).first()
    if found is not None:
        return found
    key_pem, certificate_pem = create()
    row, _ = PlatformKey.objects.get_or_create(
        use=use, defaults={"key_pem": key_pem, "certificate_pem": certificate_pem}
    )
    return row
