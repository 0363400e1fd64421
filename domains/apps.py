from django.apps import AppConfig


class DomainsConfig(AppConfig):
    name = "domains"

    def ready(self) -> None:
        # Importing the module registers its system checks.
        from domains import checks  # noqa: F401
