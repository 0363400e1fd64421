"""The key.expiring owner event (a key's projects are told a week before it ends): a new
choice of OwnerEvent.type, in Django's state only (the column is plain varchar)."""

from django.db import migrations, models

from petstore.database.migrations import LockTimeoutMigration


class Migration(LockTimeoutMigration):
    dependencies = [("domains", "0023_email_deliveries_to_members")]

    operations = [
        migrations.AlterField(
            model_name="ownerevent",
            name="type",
            field=models.CharField(
                choices=[
                    ("domain.active", "The domain is live with its certificate"),
                    ("domain.failing", "A check of a live domain failed"),
                    ("domain.stopped", "The domain stopped serving"),
                    ("domain.recovered", "The domain verifies again"),
                    ("certificate.renewal_failed", "A certificate renewal failed"),
                    ("claim.contested", "Another project claimed the name"),
                    ("claim.lost", "Another project's TXT proof took the name"),
                    ("claim.expired", "A claim that never verified was dropped"),
                    ("redirect.paused", "A redirect paused: its target is not live"),
                    ("key.expiring", "An API key ends soon"),
                ],
                max_length=40,
            ),
        ),
    ]
