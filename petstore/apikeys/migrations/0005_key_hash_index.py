"""An index of the keys' hashes: a request's key is found by its hash, so a wrong secret for a
real prefix misses the index exactly as an unknown prefix does (petstore/apikeys/keycache.py).

Safe in a rolling deploy: the previous release finds keys by prefix and never reads it.
The table holds one row per key issued, so building the index is brief.
"""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("apikeys", "0004_idempotencyrecord_claim_unused"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name="apikey",
            index=models.Index(fields=["key_hash"], name="apikeys_key_hash_idx"),
        ),
    ]
