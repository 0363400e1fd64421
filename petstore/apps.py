from django.apps import AppConfig


class PetstoreConfig(AppConfig):
    """The project package as an app: operations data (task failures) and its admin."""

    name = "petstore"
    verbose_name = "Operations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Importing these registers the system checks and the OpenAPI extension of the
        # bearer scheme.
        from petstore import checks, errorreporting, taskfailures  # noqa: F401
        from petstore.api import openapi  # noqa: F401
        from petstore.metrics import backups, build, endpoint, queues, store

        errorreporting.start()
        taskfailures.connect()
        endpoint.register(build.BuildInfoCollector())
        endpoint.register(queues.QueueDepthCollector())
        endpoint.register(backups.BackupCollector())
        store.store().start()
