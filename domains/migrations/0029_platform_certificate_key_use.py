"""The platform's wildcard certificate (of *.PLATFORM_DOMAIN and PLATFORM_DOMAIN, issued over
DNS-01) is a PlatformKey row of its own use: its key sealed like every other, its chain beside
it. Only the field's choices change: no SQL."""

from django.db import migrations, models

from petstore.database.migrations import LockTimeoutMigration


class Migration(LockTimeoutMigration):
    dependencies = [
        ("domains", "0028_attempts_keep_their_reason"),
    ]

    operations = [
        migrations.AlterField(
            model_name="platformkey",
            name="use",
            field=models.CharField(
                choices=[
                    ("acme_account", "The ACME account's key"),
                    ("local_ca", "The local CA's key and certificate"),
                    ("platform_cert", "The platform's wildcard certificate and its key"),
                ],
                max_length=20,
                unique=True,
            ),
        ),
    ]
