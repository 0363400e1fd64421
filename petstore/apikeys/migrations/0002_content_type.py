"""The content type of ApiKey follows the model from `pets` to `apikeys`.

Renamed rather than recreated: the permissions hang on the content type's id, so the
groups and users that hold `add/change/view_apikey` keep them. On a fresh database
there is no row yet (post_migrate creates it under the new label afterwards).
"""

from django.db import migrations

MODEL = "apikey"


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
        ("apikeys", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
