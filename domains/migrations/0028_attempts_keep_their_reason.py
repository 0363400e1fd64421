"""A delivery attempt keeps the platform's reason for having no answer as a sentence, to
read in the reader's language; nullable, so rows before it and the previous release's
INSERTs need nothing."""

from django.db import migrations, models

from petstore.database.migrations import LockTimeoutMigration


class Migration(LockTimeoutMigration):
    dependencies = [
        ("domains", "0027_certificates_and_orders_record_their_ca"),
    ]

    operations = [
        migrations.AddField(
            model_name="deliveryattempt",
            name="said",
            field=models.JSONField(blank=True, null=True),
        ),
    ]
