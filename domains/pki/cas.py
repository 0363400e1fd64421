"""The ACME certificate authorities the platform asks, in order (DOMAINS_ACME_DIRECTORIES),
each with what is its own: the CAA issuer names that allow it, the CA file its HTTPS is
trusted with, its external account binding. Every per-CA setting is one value for all the
directories or one per directory, in their order, `-` for a CA that has none
(`petstore.env.one_each`: the settings read them so at start-up, and this module again, for
the directories a test sets).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

from petstore.env import one_each

DIRECTORIES = "DOMAINS_ACME_DIRECTORIES"


@dataclass(frozen=True)
class AcmeCA:
    directory: str
    # Any one of these in a CAA `issue` property allows this CA.
    caa_identities: tuple[str, ...]
    # A CA file for the directory's HTTPS; empty: the system's.
    ca_bundle: str
    # (key id, base64url HMAC key) where the CA binds accounts to one of its own.
    eab: tuple[str, str] | None

    @property
    def label(self) -> str:
        """The CA as an owner and an operator read it: its directory's host."""
        return urlsplit(self.directory).netloc or self.directory


def configured() -> list[AcmeCA]:
    """The CAs of DOMAINS_ACME_DIRECTORIES, in their order."""
    directories = list(settings.DOMAINS_ACME_DIRECTORIES)
    identities, bundles, bindings = (
        one_each(name, list(getattr(settings, name)), count=len(directories), of=DIRECTORIES)
        for name in ("DOMAINS_ACME_CAA_IDENTITIES", "DOMAINS_ACME_CA_BUNDLE", "DOMAINS_ACME_EAB")
    )
    return [
        AcmeCA(
            directory=directory,
            caa_identities=tuple(names.split()) or (settings.DOMAINS_CA_IDENTIFIER,),
            ca_bundle=bundle,
            eab=_binding(binding),
        )
        for directory, names, bundle, binding in zip(
            directories, identities, bundles, bindings, strict=True
        )
    ]


def _binding(value: str) -> tuple[str, str] | None:
    if not value:
        return None
    kid, _, hmac_key = value.partition(":")
    return kid, hmac_key
