"""The idempotency records' `claim_token` and `locked_at` leave the database: migration 0006
took them out of the model and kept them, with a default and NULL, for release 1.0.0's
processes during the deploy into 1.1.0. Release 1.1.0's ORM names neither.

Going back makes them again as 0006 left them."""

from django.db import migrations

from petstore.database.migrations import LockTimeoutMigration

DROP = "ALTER TABLE pets_idempotencyrecord DROP COLUMN claim_token, DROP COLUMN locked_at"
RESTORE = """
ALTER TABLE pets_idempotencyrecord
    ADD COLUMN claim_token varchar(32) NOT NULL DEFAULT '',
    ADD COLUMN locked_at timestamptz
"""


class Migration(LockTimeoutMigration):
    dependencies = [
        ("apikeys", "0008_key_last_used_ip_and_expiry_told"),
    ]

    operations = [
        migrations.RunSQL(DROP, RESTORE, elidable=False),
    ]
