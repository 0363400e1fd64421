"""ApiKey now belongs to the `apikeys` app (petstore/apikeys), which took over its table
in apikeys.0001: it leaves this app's state only, and the idempotency records' foreign key
points at the same table under its new owner. Nothing changes in the database."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("pets", "0001_initial"),
        ("apikeys", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="idempotencyrecord",
                    name="api_key",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="apikeys.apikey",
                    ),
                ),
                migrations.DeleteModel(name="ApiKey"),
            ],
            database_operations=[],
        ),
    ]
