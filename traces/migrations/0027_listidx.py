"""The trace list at 50,000 traces (issue 25): an index for every filter of the list.

B-tree indexes for the filters that had none (live traces, a project alone, error
results, a run set by name, a severity alone), the rule rows' index with the trace last
(the traces that fired, read from the index alone), and for the search box's substring match of names, models, tool names and
file names, each database's own trigram index:

PostgreSQL: pg_trgm GIN indexes over `UPPER(column::text)`, exactly the expression
Django's `icontains` compares (`UPPER("name"::text) LIKE UPPER('%…%')`), so the query
stays the ORM's and the planner matches it to the index. `fastupdate = off` for the
reason migration 0022 gives: rows waiting in GIN's pending list make the planner price
the index so high that it scans instead.

SQLite: an FTS5 table with the trigram tokenizer over the same four columns, kept in
step with traces_trace by triggers (every insert, update of those columns and delete,
the ORM's bulk writes and cascades included). Its rowids come from a key table with an
INTEGER PRIMARY KEY rather than from traces_trace's own rowid, which VACUUM may
renumber (the trace's key is a UUID). Without FTS5 or the trigram tokenizer (SQLite
before 3.34) neither is made and search scans, as before. Django rebuilds a table it
alters on SQLite, dropping its triggers: traces.storage.trace_text_index puts them back
after every migrate.

The SQL is spelled out here rather than imported, so this migration keeps meaning what
it meant when it ran.
"""

from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations, models
from django.db.utils import OperationalError

COLUMNS = ("name", "model", "tool_names", "source_filename")
LIST = ", ".join(COLUMNS)
NEW = ", ".join(f"new.{column}" for column in COLUMNS)
CHANGED = " OR ".join(f"old.{column} IS NOT new.{column}" for column in COLUMNS)
KEY_OF = "(SELECT id FROM traces_trace_text_key WHERE trace_id = {row}.id)"

SQLITE = [
    "CREATE TABLE traces_trace_text_key "
    "(id INTEGER PRIMARY KEY, trace_id char(32) NOT NULL UNIQUE)",
    f"CREATE VIRTUAL TABLE traces_trace_text USING fts5({LIST}, tokenize='trigram')",
    "CREATE TRIGGER traces_trace_text_ai AFTER INSERT ON traces_trace BEGIN "
    "INSERT OR IGNORE INTO traces_trace_text_key(trace_id) VALUES (new.id); "
    f"DELETE FROM traces_trace_text WHERE rowid = {KEY_OF.format(row='new')}; "
    f"INSERT INTO traces_trace_text(rowid, {LIST}) VALUES ({KEY_OF.format(row='new')}, {NEW}); "
    "END",
    f"CREATE TRIGGER traces_trace_text_au AFTER UPDATE OF {LIST} ON traces_trace "
    f"WHEN {CHANGED} BEGIN "
    f"DELETE FROM traces_trace_text WHERE rowid = {KEY_OF.format(row='old')}; "
    "INSERT OR IGNORE INTO traces_trace_text_key(trace_id) VALUES (new.id); "
    f"INSERT INTO traces_trace_text(rowid, {LIST}) VALUES ({KEY_OF.format(row='new')}, {NEW}); "
    "END",
    "CREATE TRIGGER traces_trace_text_ad AFTER DELETE ON traces_trace BEGIN "
    f"DELETE FROM traces_trace_text WHERE rowid = {KEY_OF.format(row='old')}; "
    "DELETE FROM traces_trace_text_key WHERE trace_id = old.id; "
    "END",
    "INSERT INTO traces_trace_text_key(trace_id) SELECT id FROM traces_trace",
    f"INSERT INTO traces_trace_text(rowid, {LIST}) "
    f"SELECT k.id, {', '.join(f't.{column}' for column in COLUMNS)} "
    "FROM traces_trace t JOIN traces_trace_text_key k ON k.trace_id = t.id",
]
SQLITE_UNDO = [
    "DROP TRIGGER IF EXISTS traces_trace_text_ai",
    "DROP TRIGGER IF EXISTS traces_trace_text_au",
    "DROP TRIGGER IF EXISTS traces_trace_text_ad",
    "DROP TABLE IF EXISTS traces_trace_text",
    "DROP TABLE IF EXISTS traces_trace_text_key",
]
POSTGRES = [
    f"CREATE INDEX trace_{column}_trgm ON traces_trace "
    f"USING GIN ((UPPER({column}::text)) gin_trgm_ops) WITH (fastupdate = off)"
    for column in COLUMNS
]
POSTGRES_UNDO = [f"DROP INDEX IF EXISTS trace_{column}_trgm" for column in COLUMNS]


def _run(statements, schema_editor):
    for statement in statements:
        schema_editor.execute(statement)


def _trigram_tokenizer(connection) -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("CREATE VIRTUAL TABLE temp.trigram_probe USING fts5(x, tokenize='trigram')")
            cursor.execute("DROP TABLE temp.trigram_probe")
    except OperationalError:  # no FTS5, or SQLite before 3.34: search scans instead
        return False
    return True


def make_indexes(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        _run(POSTGRES, schema_editor)
    elif vendor == "sqlite" and _trigram_tokenizer(schema_editor.connection):
        _run(SQLITE, schema_editor)


def drop_indexes(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        _run(POSTGRES_UNDO, schema_editor)
    elif vendor == "sqlite":
        _run(SQLITE_UNDO, schema_editor)


class PostgresTrigramExtension(TrigramExtension):
    """pg_trgm on PostgreSQL; nothing elsewhere, either way (Django's own operation asks
    PostgreSQL's catalogue when unapplied, whatever the database)."""

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)


class Migration(migrations.Migration):

    dependencies = [
        ('traces', '0026_usage'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='tracerule',
            name='trace_rule_idx',
        ),
        migrations.AddIndex(
            model_name='tracerule',
            index=models.Index(fields=['rule', 'severity', 'trace'], name='trace_rule_trace_idx'),
        ),
        migrations.AddIndex(
            model_name='tracerule',
            index=models.Index(fields=['severity', 'trace'], name='trace_severity_idx'),
        ),
        migrations.AddIndex(
            model_name='runset',
            index=models.Index(fields=['name'], name='runset_name_idx'),
        ),
        migrations.AddIndex(
            model_name='trace',
            index=models.Index(fields=['state', '-created_at'], name='trace_state_idx'),
        ),
        migrations.AddIndex(
            model_name='trace',
            index=models.Index(fields=['working_dir', '-created_at'], name='trace_project_idx'),
        ),
        migrations.AddIndex(
            model_name='trace',
            index=models.Index(fields=['error_results'], name='trace_errors_idx'),
        ),
        PostgresTrigramExtension(),
        migrations.RunPython(make_indexes, drop_indexes),
    ]
