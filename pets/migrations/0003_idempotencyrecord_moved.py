"""IdempotencyRecord now belongs to the `apikeys` app (petstore/apikeys), which took over
its table in apikeys.0003: it leaves this app's state only. Nothing changes in the
database."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("pets", "0002_apikey_moved"),
        ("apikeys", "0003_idempotencyrecord_moved"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="IdempotencyRecord")],
            database_operations=[],
        ),
    ]
