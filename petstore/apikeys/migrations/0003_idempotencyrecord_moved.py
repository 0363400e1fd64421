"""IdempotencyRecord moves here from the pets app, table and rows as they are.

Idempotency-Key is part of the API platform (petstore/api/idempotency.py), used by every
resource's POST, so its records belong beside the API keys they hang on. The table
`pets_idempotencyrecord` was created by pets.0001: this app takes the model into its
state only, and pets.0003 drops it from the pets app's state. Its content type is
renamed, as apikeys.0002 did for ApiKey, so permissions on it are kept.
"""

import django.db.models.deletion
from django.db import migrations, models

MODEL = "idempotencyrecord"


def relabel(apps, old: str, new: str) -> None:
    content_types = apps.get_model("contenttypes", "ContentType").objects
    if content_types.filter(app_label=new, model=MODEL).exists():
        return  # already there (created by a post_migrate between two partial migrates)
    content_types.filter(app_label=old, model=MODEL).update(app_label=new)


def forwards(apps, schema_editor) -> None:
    relabel(apps, "pets", "apikeys")


def backwards(apps, schema_editor) -> None:
    relabel(apps, "apikeys", "pets")


class Migration(migrations.Migration):
    dependencies = [
        ("apikeys", "0002_content_type"),
        ("pets", "0002_apikey_moved"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="IdempotencyRecord",
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
                        ("key", models.CharField(max_length=255)),
                        ("fingerprint", models.CharField(max_length=64)),
                        ("claim_token", models.CharField(max_length=32)),
                        ("locked_at", models.DateTimeField()),
                        ("expires_at", models.DateTimeField(db_index=True)),
                        (
                            "response_status",
                            models.PositiveSmallIntegerField(blank=True, null=True),
                        ),
                        ("response_body", models.JSONField(blank=True, null=True)),
                        ("response_headers", models.JSONField(blank=True, default=dict)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "api_key",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="apikeys.apikey",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "pets_idempotencyrecord",
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("api_key", "key"), name="pets_idempotency_unique_key"
                            ),
                            models.CheckConstraint(
                                condition=models.Q(
                                    ("response_status__isnull", True),
                                    ("response_status__gte", 100),
                                    _connector="OR",
                                ),
                                name="pets_idempotency_status_valid",
                            ),
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(forwards, backwards),
    ]
