"""The live report worker's entry point, run in a spawned child process by traces.live.

Kept apart from traces.live because a spawned child imports its target's module before
Django is set up, and traces.live needs the models: this module imports nothing from
Django until `main` has configured it.
"""

from __future__ import annotations

import os
from multiprocessing.connection import Connection
from typing import Any


def main(pipe: Connection, settings_module: str, databases: dict[str, Any]) -> None:
    """Set up Django with the parent's settings and databases (tests run on a test
    database of another name), then answer `trace id -> report` requests until the
    parent closes the pipe."""
    if settings_module:
        os.environ["DJANGO_SETTINGS_MODULE"] = settings_module
    import django
    from django.conf import settings

    settings.DATABASES = databases
    django.setup()
    from django.db import connection

    from traces.live import report_of

    while True:
        try:
            trace_id = pipe.recv()
        except (EOFError, OSError):
            return
        try:
            result = report_of(trace_id)
            answer: tuple = ("ok", result) if result is not None else ("skip",)
        except Exception as exc:
            answer = ("error", f"{type(exc).__name__}: {exc}")
        finally:
            connection.close()  # never hold the database between reports
        pipe.send(answer)
