from django.apps import AppConfig


class PetsConfig(AppConfig):
    name = "pets"
    verbose_name = "Pets API"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_delete, post_save

        # `schema` registers the OpenAPI extension for the bearer scheme.
        from petstore.api import keycache
        from petstore.api import openapi as schema  # noqa: F401
        from petstore.api.models import ApiKey

        # Cache coherence only (no business effect): a user's change or deletion,
        # or a key's deletion, must not outlive a cached key lookup (pets/keycache.py).
        post_save.connect(keycache.forget_user_keys, sender=get_user_model(), weak=False)
        post_delete.connect(keycache.forget_key, sender=ApiKey, weak=False)
