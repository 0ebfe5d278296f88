"""Startup problems as Django system checks: `manage.py check` lists them, every command
that runs checks (migrate, runserver, run_huey, ingest…) stops on an error, and the ASGI
application calls `refuse_to_serve` (daphne runs no checks), so the server keeps refusing
to start shared mode with unsafe settings.

The ids are stable; docs/settings.md lists them:
  traces.E001  shared mode with the default (public) DJANGO_SECRET_KEY
  traces.E002  shared mode with DJANGO_DEBUG=1
  traces.E003  an environment variable that does not parse as its setting's type
  traces.E004  INSPECTOR_QUEUE is none of embedded, redis, immediate
  traces.W001  a key of settings.INSPECTOR that no setting has (a typo: it does nothing)
  traces.W002  PostgreSQL: processes x pool size over the server's max_connections budget
  traces.W003  SQLite without FTS5: content search scans every call's text
Registered when the app is ready (traces.apps), as django-debug-toolbar registers its own.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register, run_checks
from django.core.exceptions import ImproperlyConfigured

from traces.conf import DEFAULTS, from_environment

TAG = "traces"
"""Every check here carries it: `manage.py check --tag traces` runs ours alone."""

SHARED_MODE = "Shared mode (INSPECTOR_AUTH=1, or a non-loopback name in ALLOWED_HOSTS)"
QUEUE_MODES = ("embedded", "redis", "immediate")


@register(TAG, Tags.security)
def check_shared_mode(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Shared mode serves people other than the one at the keyboard: the session and
    share-link signatures need a secret nobody else has, and error pages must not show data."""
    if not getattr(settings, "INSPECTOR_AUTH", False):
        return []
    problems: list[CheckMessage] = []
    if getattr(settings, "DEFAULT_SECRET_KEY", None) == settings.SECRET_KEY:
        problems.append(
            Error(
                f"{SHARED_MODE} needs its own DJANGO_SECRET_KEY: the default one is public.",
                hint="export DJANGO_SECRET_KEY=\"$(python3 -c 'import secrets; "
                "print(secrets.token_urlsafe(50))')\"",
                id="traces.E001",
            )
        )
    if settings.DEBUG:
        problems.append(
            Error(
                "Shared mode refuses to run with DJANGO_DEBUG=1: error pages would show data.",
                hint="Unset DJANGO_DEBUG, or run locally (loopback ALLOWED_HOSTS, no "
                "INSPECTOR_AUTH).",
                id="traces.E002",
            )
        )
    return problems


@register(TAG)
def check_environment(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Variables that did not parse: the one settings.py read (kept in its
    INSPECTOR_ENVIRONMENT_PROBLEMS) and every INSPECTOR_<KEY> of traces.conf. Their
    defaults are in use meanwhile, which is not what was asked for."""
    _values, key_problems = from_environment()
    problems = [*getattr(settings, "INSPECTOR_ENVIRONMENT_PROBLEMS", []), *key_problems]
    return [
        Error(problem, hint="See docs/settings.md for each variable's type.", id="traces.E003")
        for problem in problems
    ]


@register(TAG)
def check_queue(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Any other INSPECTOR_QUEUE would queue tasks in memory with no consumer to run them:
    live reports, large uploads and reanalysis would wait forever."""
    mode = getattr(settings, "INSPECTOR_QUEUE", "embedded")
    if mode in QUEUE_MODES:
        return []
    return [
        Error(
            f"INSPECTOR_QUEUE={mode!r} is none of {', '.join(QUEUE_MODES)}.",
            hint="Unset it for the default (embedded, or redis with REDIS_URL).",
            id="traces.E004",
        )
    ]


@register(TAG)
def check_upstream_ca_bundle(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A CA bundle the proxy cannot read would fail every proxied call's TLS set-up; said
    once at start, naming the file, instead of on each call."""
    bundle = str(getattr(settings, "INSPECTOR_UPSTREAM_CA_BUNDLE", "") or "")
    if not bundle or (os.access(bundle, os.R_OK) and os.path.isfile(bundle)):
        return []
    return [
        Error(
            f"INSPECTOR_UPSTREAM_CA_BUNDLE={bundle!r} is not a readable file.",
            hint="Name a PEM file of the certificates to trust for the upstreams, or unset it.",
            id="traces.E005",
        )
    ]


@register(TAG)
def check_inspector_keys(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """A key of settings.INSPECTOR no setting reads is most likely a misspelt one."""
    unknown = sorted(set(getattr(settings, "INSPECTOR", {})) - set(DEFAULTS))
    return [
        Warning(
            f"settings.INSPECTOR[{key!r}] is not a Loop Inspector setting: it does nothing.",
            hint="docs/settings.md lists every key.",
            id="traces.W001",
        )
        for key in unknown
    ]


HEADROOM = 5
"""Connections left for psql, backups and migrations beside the app's pools."""


@register(TAG, Tags.database)
def check_connection_budget(
    app_configs: Any = None, databases: Any = None, **kwargs: Any
) -> list[CheckMessage]:
    """Every web and worker process pools up to INSPECTOR_DB_POOL_MAX connections; when
    their sum passes what PostgreSQL accepts, the last ones to ask fail under load with
    "too many clients" (issue 26). Asks the server its max_connections and reserved
    slots, as Django's database checks do only when given the database (`migrate`,
    `check --database default`); silent on SQLite, without our pool (PgBouncer), or when
    the server cannot be reached."""
    from django.db import DatabaseError, connection

    if not databases or "default" not in databases:
        return []
    database = settings.DATABASES["default"]
    pool = database.get("OPTIONS", {}).get("pool")
    if connection.vendor != "postgresql" or not pool:
        return []
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('max_connections')::int, "
                "current_setting('superuser_reserved_connections')::int"
            )
            max_connections, reserved = cursor.fetchone()
    except DatabaseError:
        return []
    processes = int(getattr(settings, "INSPECTOR_DB_PROCESSES", 4))
    wanted = processes * int(pool["max_size"])
    budget = max_connections - reserved - HEADROOM
    if wanted <= budget:
        return []
    return [
        Warning(
            f"{processes} processes × INSPECTOR_DB_POOL_MAX={pool['max_size']} = {wanted} "
            f"connections, over PostgreSQL's budget of {budget} (max_connections "
            f"{max_connections} − {reserved} reserved − {HEADROOM} headroom).",
            hint=(
                "Lower INSPECTOR_DB_POOL_MAX, raise max_connections, set "
                "INSPECTOR_DB_PROCESSES to the real count, or put PgBouncer in front "
                "(INSPECTOR_DB_PGBOUNCER=1; docs/settings.md)."
            ),
            id="traces.W002",
        )
    ]


@register(TAG, Tags.database)
def check_content_search(
    app_configs: Any = None, databases: Any = None, **kwargs: Any
) -> list[CheckMessage]:
    """Migration 0022 makes content search's FTS5 table only when SQLite was built with
    FTS5; without it search still answers, by scanning every call's text, which is slow
    past a few thousand calls. Asked only when given the database, as W002 is."""
    from django.db import DatabaseError, connection

    from traces.models.rows import SEARCH_FTS_TABLE, SearchEntry

    if not databases or "default" not in databases or connection.vendor != "sqlite":
        return []
    entries = SearchEntry._meta.db_table
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT name FROM sqlite_master WHERE name IN (%s, %s)",
                [entries, SEARCH_FTS_TABLE],
            )
            found = {name for (name,) in cursor.fetchall()}
    except DatabaseError:
        return []
    if entries not in found or SEARCH_FTS_TABLE in found:  # not migrated yet, or indexed
        return []
    return [
        Warning(
            "This SQLite has no FTS5: content search scans every call's text (slow past a "
            "few thousand calls).",
            hint=(
                "Serve with a Python whose sqlite3 module has FTS5 (most builds do), or "
                "use PostgreSQL (DATABASE_URL; docs/settings.md)."
            ),
            id="traces.W003",
        )
    ]


def refuse_to_serve() -> None:
    """Raise on any error-level check of ours, naming its id: the ASGI application calls
    this before it serves, since daphne runs no system checks. SILENCED_SYSTEM_CHECKS does
    not silence these here: no setting lets a server start shared mode unsafely."""
    errors = [message for message in run_checks(tags=[TAG]) if message.is_serious()]
    if errors:
        raise ImproperlyConfigured(
            "The server refuses to start: "
            + " ".join(f"({message.id}) {message.msg}" for message in errors)
        )
