"""A delivered delivery reads "Delivered" (its channel says how): a new label of
Delivery.state, in Django's state only (the column is plain varchar)."""

from django.db import migrations, models

from petstore.database.migrations import LockTimeoutMigration


class Migration(LockTimeoutMigration):
    dependencies = [("domains", "0024_key_expiring_event")]

    operations = [
        migrations.AlterField(
            model_name="delivery",
            name="state",
            field=models.CharField(
                choices=[
                    ("pending", "Waiting for its (next) attempt"),
                    ("sending", "Being sent"),
                    ("delivered", "Delivered"),
                    ("skipped", "Not sent: not chosen, or told already today"),
                    ("failed", "Failed after every retry"),
                ],
                default="pending",
                max_length=10,
            ),
        ),
    ]
