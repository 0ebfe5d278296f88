"""Migrating the test database back and forth, for tests of one migration's data steps."""

from __future__ import annotations

from collections.abc import Iterator

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(targets):
    """Migrate to `targets`; the apps (historical models) of that state."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def at(targets) -> Iterator:
    """The apps at `targets`, then every migration applied again (a fixture's body)."""
    yield migrate(targets)
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
