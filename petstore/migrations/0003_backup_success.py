"""When each kind of backup last finished (BackupSuccess): a new table."""

from django.db import migrations, models

from petstore.database.migrations import LockTimeoutMigration


class Migration(LockTimeoutMigration):
    dependencies = [
        ("petstore", "0002_account_language"),
    ]

    operations = [
        migrations.CreateModel(
            name="BackupSuccess",
            fields=[
                (
                    "kind",
                    models.CharField(
                        choices=[
                            (
                                "pgbackrest",
                                "pgBackRest base backup (point-in-time recovery with the WAL)",
                            ),
                            ("logical", "Logical copy (manage.py backup)"),
                        ],
                        max_length=20,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                ("finished_at", models.DateTimeField()),
                ("detail", models.CharField(blank=True, max_length=500)),
            ],
        ),
    ]
