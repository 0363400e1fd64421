from django.apps import AppConfig


class DomainsConfig(AppConfig):
    name = "domains"

    def ready(self) -> None:
        # Importing the module registers its system checks.
        from domains import checks, metrics  # noqa: F401
        from petstore.metrics import endpoint

        endpoint.register(metrics.DomainCollector())
        endpoint.register(metrics.SweepCollector())
