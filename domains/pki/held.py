"""The platform's own private keys, in the database (PlatformKey): the ACME account's and the
local CA's, with its certificate.

In a row, not on one host's disk: certificates workers on any number of hosts sign with
the same ACME account (so any of them resumes an order another placed), and a worker
restarted on an empty disk (a PaaS, a new container) registers no new account. Each is
created once, by whichever process needs it first; the unique `use` settles a race (the
loser reads the winner's row).

A release before this one kept them as files under DOMAINS_CA_DIR. The first process that
finds no row takes the files' key instead (copied sealed as it is; sealed first if it was
kept in clear), so an upgrade keeps its ACME account and the local CA its clients trust.
After that nothing in the folder is read again, and nothing there must survive: it holds
only a copy of the local CA's certificate for `make run`'s hints
(domains/pki/local.py `root_certificate_path`), written again from the row when it differs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from django.conf import settings

from domains.choices import PlatformKeyUse
from domains.models import PlatformKey
from domains.pki import keys

# The files a release before this one kept each key (and the CA's certificate) in.
FILES_BEFORE: dict[str, tuple[str, str]] = {
    PlatformKeyUse.ACME_ACCOUNT: ("acme-account-key", ""),
    PlatformKeyUse.LOCAL_CA: ("ca-key.pem", "ca-cert.pem"),
}

# A new key: its sealed PEM and, for a CA, its certificate's PEM.
Creator = Callable[[], tuple[str, str]]


def held(use: PlatformKeyUse, create: Creator) -> PlatformKey:
    """The platform's key for `use`: its row; else the files an older release left, taken
    in; else a new one from `create`."""
    found = PlatformKey.objects.filter(use=use).first()
    if found is not None:
        return found
    key_pem, certificate_pem = from_files(use) or create()
    row, _ = PlatformKey.objects.get_or_create(
        use=use, defaults={"key_pem": key_pem, "certificate_pem": certificate_pem}
    )
    return row


def from_files(use: PlatformKeyUse) -> tuple[str, str] | None:
    """The key (sealed) and certificate an older release kept under DOMAINS_CA_DIR for `use`,
    or None when they are not all there."""
    key_name, certificate_name = FILES_BEFORE[use]
    directory = Path(settings.DOMAINS_CA_DIR)
    key_path = directory / key_name
    if not key_path.is_file():
        return None
    certificate = ""
    if certificate_name:
        certificate_path = directory / certificate_name
        if not certificate_path.is_file():
            return None
        certificate = certificate_path.read_text()
    key_pem = key_path.read_text()
    return (key_pem if keys.is_sealed(key_pem) else keys.seal(key_pem)), certificate


def take_in_files() -> list[str]:
    """Every key an older release left under DOMAINS_CA_DIR that has no row yet, taken in
    (at the start of the certificates worker, the edge and `manage.py check`, so what they
    check is what will be used); the uses taken in."""
    taken = []
    for use in PlatformKeyUse:
        if PlatformKey.objects.filter(use=use).exists() or (found := from_files(use)) is None:
            continue
        PlatformKey.objects.get_or_create(
            use=use, defaults={"key_pem": found[0], "certificate_pem": found[1]}
        )
        taken.append(use.value)
    return taken
