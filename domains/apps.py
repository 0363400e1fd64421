from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import pre_delete


class DomainsConfig(AppConfig):
    name = "domains"

    def ready(self) -> None:
        # Importing the module registers its system checks.
        from domains import checks, metrics  # noqa: F401
        from domains.services import projects
        from petstore.metrics import endpoint

        endpoint.register(metrics.DomainCollector())
        endpoint.register(metrics.SweepCollector())
        # However an account is deleted (the admin, a script), the projects only it owns go
        # first, with their audit line.
        pre_delete.connect(
            projects.account_closing, sender=settings.AUTH_USER_MODEL, dispatch_uid="domains"
        )
