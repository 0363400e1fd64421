"""Seal every stored private key again under the current DOMAINS_KEY_ENCRYPTION_KEY.

    DOMAINS_KEY_ENCRYPTION_KEY=<new> DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS=<old> \\
        python manage.py resealkeys

After it, the old key can go from DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS. A key already
under the current one is left as it is, so running it again reseals nothing.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from domains.pki import sealing
from domains.pki.stored import reseal_all


class Command(BaseCommand):
    help = (
        "Seal every stored private key (certificates, ACME orders, the local CA, the ACME "
        "account) again under DOMAINS_KEY_ENCRYPTION_KEY, after a rotation."
    )

    def handle(self, *args, **options):
        try:
            counts = reseal_all()
        except sealing.KeyNotSet as error:
            raise CommandError(f"resealkeys: {error}") from None
        except sealing.InvalidToken:
            raise CommandError(
                "resealkeys: a stored key opens with neither DOMAINS_KEY_ENCRYPTION_KEY nor "
                "DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS; put the key that sealed it in "
                "DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS"
            ) from None
        self.stdout.write(
            f"Resealed {counts.resealed} private keys under the current key "
            f"({counts.current} already were)."
        )
