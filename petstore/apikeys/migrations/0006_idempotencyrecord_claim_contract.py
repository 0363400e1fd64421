"""Idempotency records always hold their answer: `response_status` becomes NOT NULL (the
claims without one, which no running process completes, are deleted first) and
`claim_token` and `locked_at` leave the model.

The two columns stay in the database, with the default ('') and NULL migration 0004 gave
them, so an INSERT that leaves them out succeeds: the ORM of release 1.0.0 still SELECTs
them during the rolling deploy into 1.1.0 (the marker in petstore/apikeys/models.py).
"""

from django.db import migrations, models
from django.db.models import Q

UNANSWERED = "DELETE FROM pets_idempotencyrecord WHERE response_status IS NULL"


class Migration(migrations.Migration):
    dependencies = [
        ("apikeys", "0005_key_hash_index"),
    ]

    operations = [
        migrations.RunSQL(UNANSWERED, migrations.RunSQL.noop, elidable=False),
        migrations.RemoveConstraint(
            model_name="idempotencyrecord", name="pets_idempotency_status_valid"
        ),
        migrations.AlterField(
            model_name="idempotencyrecord",
            name="response_status",
            field=models.PositiveSmallIntegerField(),
        ),
        migrations.AddConstraint(
            model_name="idempotencyrecord",
            constraint=models.CheckConstraint(
                condition=Q(response_status__gte=100), name="pets_idempotency_status_valid"
            ),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(model_name="idempotencyrecord", name="claim_token"),
                migrations.RemoveField(model_name="idempotencyrecord", name="locked_at"),
            ],
        ),
    ]
