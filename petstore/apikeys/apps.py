from django.apps import AppConfig


class ApiKeysConfig(AppConfig):
    name = "petstore.apikeys"
    label = "apikeys"
    verbose_name = "API keys"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_delete, post_save

        from petstore.apikeys import keycache
        from petstore.apikeys.models import ApiKey

        # Cache coherence only (no business effect): a user's change or deletion, or a
        # key's deletion, must not outlive a cached key lookup (keycache.py).
        post_save.connect(keycache.forget_user_keys, sender=get_user_model(), weak=False)
        post_delete.connect(keycache.forget_key, sender=ApiKey, weak=False)
