"""Content search (issue 22): one row of text per call, and each database's own index of it.

SQLite: an FTS5 table over `body` (external content: the text is stored once, in
traces_searchentry) kept in step by triggers, so every insert and delete of an entry,
the ORM's cascades included, updates it. When this SQLite was built without FTS5 the
table is not made and search falls back to scanning `body` (traces.W003 says so).
PostgreSQL: a generated `tsvector` column and a GIN index over it. Both see text as runs
of letters and digits (unicode61; the regexp_replace before `to_tsvector`), as the query
side does (traces.core.outputs.content_search). The SQL is spelled out here rather than
imported, so this migration keeps meaning what it meant when it ran.
"""

import django.db.models.deletion
from django.db import migrations, models
from django.db.utils import OperationalError

SQLITE = [
    "CREATE VIRTUAL TABLE traces_searchentry_fts USING fts5(body, "
    "content='traces_searchentry', content_rowid='id', "
    "tokenize='unicode61 remove_diacritics 0')",
    "CREATE TRIGGER traces_searchentry_ai AFTER INSERT ON traces_searchentry BEGIN "
    "INSERT INTO traces_searchentry_fts(rowid, body) VALUES (new.id, new.body); END",
    "CREATE TRIGGER traces_searchentry_ad AFTER DELETE ON traces_searchentry BEGIN "
    "INSERT INTO traces_searchentry_fts(traces_searchentry_fts, rowid, body) "
    "VALUES ('delete', old.id, old.body); END",
    "CREATE TRIGGER traces_searchentry_au AFTER UPDATE ON traces_searchentry BEGIN "
    "INSERT INTO traces_searchentry_fts(traces_searchentry_fts, rowid, body) "
    "VALUES ('delete', old.id, old.body); "
    "INSERT INTO traces_searchentry_fts(rowid, body) VALUES (new.id, new.body); END",
]
SQLITE_UNDO = [
    "DROP TRIGGER IF EXISTS traces_searchentry_ai",
    "DROP TRIGGER IF EXISTS traces_searchentry_ad",
    "DROP TRIGGER IF EXISTS traces_searchentry_au",
    "DROP TABLE IF EXISTS traces_searchentry_fts",
]
POSTGRES = [
    "ALTER TABLE traces_searchentry ADD COLUMN document tsvector GENERATED ALWAYS AS "
    "(to_tsvector('simple'::regconfig, regexp_replace(body, '[^[:alnum:]]+', ' ', 'g'))) "
    "STORED",
    # fastupdate off: without it new rows wait in GIN's pending list until a vacuum, and
    # until then the planner prices the index so high that it scans and detoasts every
    # row instead (bench/list.py: 0.2 ms by the index, 1.3 s without, at 40,000 calls).
    "CREATE INDEX traces_searchentry_document ON traces_searchentry USING GIN (document) "
    "WITH (fastupdate = off)",
]
POSTGRES_UNDO = [
    "DROP INDEX IF EXISTS traces_searchentry_document",
    "ALTER TABLE traces_searchentry DROP COLUMN IF EXISTS document",
]


def _run(statements, schema_editor):
    for statement in statements:
        schema_editor.execute(statement)


def make_index(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        _run(POSTGRES, schema_editor)
    elif vendor == "sqlite":
        try:
            schema_editor.connection.cursor().execute(
                "CREATE VIRTUAL TABLE temp.fts5_probe USING fts5(x)"
            )
            schema_editor.connection.cursor().execute("DROP TABLE temp.fts5_probe")
        except OperationalError:  # built without FTS5: search scans the text instead
            return
        _run(SQLITE, schema_editor)


def drop_index(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        _run(POSTGRES_UNDO, schema_editor)
    elif vendor == "sqlite":
        _run(SQLITE_UNDO, schema_editor)


class Migration(migrations.Migration):

    dependencies = [
        ('traces', '0021_watch'),
    ]

    operations = [
        migrations.CreateModel(
            name='SearchEntry',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('call_index', models.PositiveIntegerField()),
                ('body', models.TextField()),
                ('trace', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='search_entries', to='traces.trace')),
            ],
            options={
                'constraints': [models.UniqueConstraint(models.F('trace'), models.F('call_index'), name='unique_search_entry_call')],
            },
        ),
        migrations.RunPython(make_index, drop_index),
    ]
