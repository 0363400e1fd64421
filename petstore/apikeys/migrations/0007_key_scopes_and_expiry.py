"""Keys gain scopes and an expiry. A key made before keeps every scope and ends
DEFAULT_KEY_DAYS after this migration; its owner is told (the key expiry events).

Compatibility shim (drop in 1.3.0): the columns keep their defaults in the database (not
in Django's state), because release 1.1.0's processes INSERT keys naming neither column
while they run beside this release."""

import django.contrib.postgres.fields
from django.db import migrations, models

from petstore.database.migrations import LockTimeoutMigration

CHOICES = [
    ("pets:read", "Read pets and categories"),
    ("pets:write", "Add pets"),
    ("domains:read", "Read domains, their checks and redirects"),
    ("domains:write", "Add, verify and remove domains; redirects; the primary domain"),
    ("webhooks:read", "Read webhook endpoints and their deliveries"),
    ("webhooks:write", "Add and delete webhook endpoints, rotate secrets, redeliver"),
    ("members:read", "Read members and invitations"),
    ("members:write", "Invite, change and remove members"),
    ("audit:read", "Read the audit log"),
]
ALL = [value for value, _ in CHOICES]


class Migration(LockTimeoutMigration):
    dependencies = [("apikeys", "0006_idempotencyrecord_claim_contract")]

    operations = [
        # In the database: each key made before gets every scope and an expiry
        # DEFAULT_KEY_DAYS from now, as the columns' defaults fill the rows they add.
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE pets_apikey "
                    "ADD COLUMN scopes varchar(32)[] NOT NULL DEFAULT '{" + ",".join(ALL) + "}', "
                    "ADD COLUMN expires_at timestamptz NOT NULL DEFAULT now() + interval '90 days'",
                    reverse_sql="ALTER TABLE pets_apikey DROP COLUMN scopes, DROP COLUMN expires_at",
                )
            ],
            state_operations=[
                migrations.AddField(
                    model_name="apikey",
                    name="scopes",
                    field=django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=32, choices=CHOICES),
                        default=list,
                        size=None,
                    ),
                ),
                migrations.AddField(
                    model_name="apikey", name="expires_at", field=models.DateTimeField()
                ),
            ],
        ),
    ]
