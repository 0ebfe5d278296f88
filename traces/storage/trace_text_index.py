"""SQLite's trigram index of trace names, models, tool names and file names (migration
0027), kept working after the migrations that follow it.

Django alters a table on SQLite by rebuilding it (a new table, the rows copied, the old
one dropped, the new one renamed), and dropping traces_trace drops the triggers that keep
the index in step with it: every later insert, rename or delete would then be missed,
silently. So after every `migrate` (and `flush`) the triggers are checked, and when one is
missing they are made again and the index is rebuilt from the table, which may have
changed while they were gone. PostgreSQL's indexes belong to the table and survive.
"""

from __future__ import annotations

from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

TEXT_TABLE = "traces_trace_text"
"""The FTS5 table (tokenize='trigram'); absent without FTS5 or before SQLite 3.34."""
KEY_TABLE = "traces_trace_text_key"
"""The trace id of each rowid of TEXT_TABLE (INTEGER PRIMARY KEY: VACUUM keeps it)."""
COLUMNS = ("name", "model", "tool_names", "source_filename")
"""The Trace columns the list's search box matches as substrings."""
TRIGGERS = ("traces_trace_text_ai", "traces_trace_text_au", "traces_trace_text_ad")

_LIST = ", ".join(COLUMNS)
_NEW = ", ".join(f"new.{column}" for column in COLUMNS)
_CHANGED = " OR ".join(f"old.{column} IS NOT new.{column}" for column in COLUMNS)
_KEY_OF = f"(SELECT id FROM {KEY_TABLE} WHERE trace_id = {{row}}.id)"
_OLD_KEY = _KEY_OF.format(row="old")
_NEW_KEY = _KEY_OF.format(row="new")

TRIGGER_SQL = (
    # INSERT OR IGNORE and the DELETE before each INSERT: a key or a row left behind by
    # anything (a trigger missing for a while) can never make a trace's INSERT fail.
    f"CREATE TRIGGER {TRIGGERS[0]} AFTER INSERT ON traces_trace BEGIN "
    f"INSERT OR IGNORE INTO {KEY_TABLE}(trace_id) VALUES (new.id); "
    f"DELETE FROM {TEXT_TABLE} WHERE rowid = {_NEW_KEY}; "
    f"INSERT INTO {TEXT_TABLE}(rowid, {_LIST}) VALUES ({_NEW_KEY}, {_NEW}); END",
    # WHEN: Django's save() writes every column; only a real change reindexes the row.
    f"CREATE TRIGGER {TRIGGERS[1]} AFTER UPDATE OF {_LIST} ON traces_trace "
    f"WHEN {_CHANGED} BEGIN "
    f"DELETE FROM {TEXT_TABLE} WHERE rowid = {_OLD_KEY}; "
    f"INSERT OR IGNORE INTO {KEY_TABLE}(trace_id) VALUES (new.id); "
    f"INSERT INTO {TEXT_TABLE}(rowid, {_LIST}) VALUES ({_NEW_KEY}, {_NEW}); END",
    f"CREATE TRIGGER {TRIGGERS[2]} AFTER DELETE ON traces_trace BEGIN "
    f"DELETE FROM {TEXT_TABLE} WHERE rowid = {_OLD_KEY}; "
    f"DELETE FROM {KEY_TABLE} WHERE trace_id = old.id; END",
)
REBUILD_SQL = (
    f"DELETE FROM {TEXT_TABLE}",
    f"DELETE FROM {KEY_TABLE}",
    f"INSERT INTO {KEY_TABLE}(trace_id) SELECT id FROM traces_trace",
    f"INSERT INTO {TEXT_TABLE}(rowid, {_LIST}) "
    f"SELECT k.id, {', '.join(f't.{column}' for column in COLUMNS)} "
    f"FROM traces_trace t JOIN {KEY_TABLE} k ON k.trace_id = t.id",
)


def trigram_ready(connection: BaseDatabaseWrapper) -> bool:
    """Whether this SQLite database holds the trigram table (migration 0027 made it)."""
    if connection.vendor != "sqlite":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM sqlite_master WHERE name = %s", [TEXT_TABLE])
        return cursor.fetchone() is not None


def restore_triggers(connection: BaseDatabaseWrapper) -> bool:
    """Make the index's triggers again and rebuild it when any is missing (True then)."""
    if not trigram_ready(connection):
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'traces_trace'"
        )
        present = {name for (name,) in cursor.fetchall()}
    if present.issuperset(TRIGGERS):
        return False
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        for name in TRIGGERS:
            cursor.execute(f"DROP TRIGGER IF EXISTS {name}")
        for statement in (*TRIGGER_SQL, *REBUILD_SQL):
            cursor.execute(statement)
    return True


def after_migrate(*, using: str = DEFAULT_DB_ALIAS, **_: Any) -> None:
    """`post_migrate` receiver (traces.apps)."""
    restore_triggers(connections[using])
