from django.apps import AppConfig


class PetsConfig(AppConfig):
    name = "pets"
    verbose_name = "Pets API"

    def ready(self) -> None:
        # Registers the OpenAPI extension for the bearer scheme.
        from pets import schema  # noqa: F401
