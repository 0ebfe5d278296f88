"""App configuration: registers the startup checks (traces.checks) and the storage signals."""

from django.apps import AppConfig
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate

from traces.stores import Stores


class TracesConfig(AppConfig):
    name = "traces"
    verbose_name = "Loop Inspector traces"

    def __init__(self, app_name: str, app_module: object) -> None:
        super().__init__(app_name, app_module)
        self.stores = Stores()
        """This process's state, one store per job (traces.stores)."""

    def ready(self) -> None:
        # Importing the module registers its checks; unsafe shared-mode settings are
        # refused by them (every command that runs checks, and the ASGI application).
        from traces import checks  # noqa: F401
        from traces.storage import originals, search_index, trace_text_index

        originals.connect_signals()
        # Content search's FTS5 triggers read each entry's text with this function.
        connection_created.connect(search_index.register_functions)
        # SQLite drops a table's triggers when a migration rebuilds it (trace_text_index).
        post_migrate.connect(trace_text_index.after_migrate, sender=self)
