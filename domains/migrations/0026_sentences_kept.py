"""The sentences a check, a certificate's problem and an event say, kept beside their English
text so a page or a mail says them in its reader's language (petstore/sentences.py). Nullable
columns: the previous release's INSERTs leave them out, and a row without one is shown as its
text says."""

from django.db import migrations, models

from petstore.database.migrations import LockTimeoutMigration


class Migration(LockTimeoutMigration):
    dependencies = [
        ("domains", "0025_delivery_state_label"),
    ]

    operations = [
        migrations.AddField(
            model_name="domain",
            name="cert_said",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="domain",
            name="check_said",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="domainevent",
            name="said",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="ownerevent",
            name="said",
            field=models.JSONField(blank=True, null=True),
        ),
    ]
