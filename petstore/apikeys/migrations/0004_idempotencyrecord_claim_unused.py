"""Idempotency records are written once, with their answer: `claim_token` and `locked_at`
are no longer written, so the first gets a database default ('') and the second becomes
nullable (`SET DEFAULT`, `DROP NOT NULL`: no table rewrite).

Safe in a rolling deploy: the previous release still writes both, and the new one leaves
them out. Reversible: going back first gives the records written without a lock time one
(they are completed: the previous release only replays them), then restores NOT NULL.
"""

from django.db import migrations, models
from django.db.models import F


def noop(apps, schema_editor) -> None:
    """Forwards, nothing to fill."""


def fill_locked_at(apps, schema_editor) -> None:
    records = apps.get_model("apikeys", "IdempotencyRecord").objects
    records.filter(locked_at__isnull=True).update(locked_at=F("created_at"))
    if schema_editor.connection.vendor == "postgresql":
        # The updates queued the deferred foreign key checks, and PostgreSQL refuses to
        # ALTER a table with pending ones: run them now, in this transaction.
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


class Migration(migrations.Migration):
    dependencies = [
        ("apikeys", "0003_idempotencyrecord_moved"),
    ]

    operations = [
        migrations.AlterField(
            model_name="idempotencyrecord",
            name="claim_token",
            field=models.CharField(blank=True, db_default="", max_length=32),
        ),
        migrations.AlterField(
            model_name="idempotencyrecord",
            name="locked_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        # Last, so that going back runs it first, before NOT NULL returns.
        migrations.RunPython(noop, fill_locked_at),
    ]
