"""A key's last use records the client address with the time, and a key remembers when its
owners were told that it ends soon. Both columns are nullable: the processes of the release
before, which name neither in their INSERTs, run beside this one during a deploy."""

from django.db import migrations, models

from petstore.database.migrations import LockTimeoutMigration


class Migration(LockTimeoutMigration):
    dependencies = [("apikeys", "0007_key_scopes_and_expiry")]

    operations = [
        migrations.AddField(
            model_name="apikey",
            name="last_used_ip",
            field=models.GenericIPAddressField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="apikey",
            name="expiry_told_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
    ]
