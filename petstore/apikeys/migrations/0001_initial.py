"""ApiKey moves here from the pets app, table and rows as they are.

The table `pets_apikey` was created by pets.0001, so this app takes the model into
its state only; pets.0002 then drops it from the pets app's state. On a fresh
database the same order holds: pets.0001 creates the table, this adopts it.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("pets", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ApiKey",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "name",
                            models.CharField(
                                default="default", help_text="A label for humans.", max_length=100
                            ),
                        ),
                        ("prefix", models.CharField(editable=False, max_length=16, unique=True)),
                        ("key_hash", models.CharField(editable=False, max_length=64)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "last_used_at",
                            models.DateTimeField(blank=True, editable=False, null=True),
                        ),
                        ("revoked_at", models.DateTimeField(blank=True, editable=False, null=True)),
                        (
                            "user",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="api_keys",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "API key",
                        "db_table": "pets_apikey",
                        "ordering": ["-created_at", "-id"],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
