"""App configuration; refuses to start shared mode with unsafe settings."""

from django.apps import AppConfig

from traces.stores import Stores


class TracesConfig(AppConfig):
    name = "traces"
    verbose_name = "Loop Inspector traces"

    def __init__(self, app_name: str, app_module: object) -> None:
        super().__init__(app_name, app_module)
        self.stores = Stores()
        """This process's state, one store per job (traces.stores)."""

    def ready(self) -> None:
        from django.conf import settings
        from django.core.exceptions import ImproperlyConfigured

        problem = shared_mode_problem(settings)
        if problem:
            raise ImproperlyConfigured(problem)
        from traces.storage import originals

        originals.connect_signals()


def shared_mode_problem(settings) -> str | None:
    """Why the server must not start in shared mode with these settings, or None."""
    if not getattr(settings, "INSPECTOR_AUTH", False):
        return None
    if getattr(settings, "DEFAULT_SECRET_KEY", None) == settings.SECRET_KEY:
        return (
            "Shared mode (INSPECTOR_AUTH=1, or a non-loopback name in ALLOWED_HOSTS) needs "
            "its own DJANGO_SECRET_KEY: the default one is public."
        )
    if settings.DEBUG:
        return "Shared mode refuses to run with DJANGO_DEBUG=1: error pages would show data."
    return None
