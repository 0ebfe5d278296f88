"""Content search stores each call's text once, and less of its index (issue 25).

SQLite: the FTS5 table becomes contentless with no positions (detail=none: every query
is words each required, never a phrase), and the text it indexes is each entry's, read by
`traces_search_text(body, packed)` (registered by traces.storage.search_index on every
connection): new entries hold it packed in `packed`, `body` empty, so it is not stored
twice (an external-content table read `body`); entries stored before keep `body` as
text and are indexed again from it here. PostgreSQL: the `tsvector` is no longer a stored
column (it was larger than the text, 0.9x the original) but the GIN index's expression,
and the blobs' primary key loses the `varchar_pattern_ops` copy Django made for LIKE,
which nothing asks of a digest; on SQLite the blob table is WITHOUT ROWID, its rows kept
in its primary key's b-tree instead of a rowid table beside a second b-tree of every
40-character digest (60.9 to 58.5 MiB at 20,000 calls: the digests arrive in no order, so
the one b-tree's pages are fuller when made here than when an ingest fills them; a later
migration that makes the table anew through Django loses this, and only this).
Migrating back unpacks the text into `body` again. The SQL is spelled out here rather
than imported, so this migration keeps meaning what it meant when it ran.
"""

from django.db import migrations, models

FTS = "traces_searchentry_fts"
TEXT = "traces_search_text({row}.body, {row}.packed)"
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS traces_searchentry_ai",
    "DROP TRIGGER IF EXISTS traces_searchentry_ad",
    "DROP TRIGGER IF EXISTS traces_searchentry_au",
    f"DROP TABLE IF EXISTS {FTS}",
]
_INSERT = f"INSERT INTO {FTS}(rowid, body) VALUES (new.id, {TEXT.format(row='new')}); "
_DELETE = (
    f"INSERT INTO {FTS}({FTS}, rowid, body) VALUES ('delete', old.id, {TEXT.format(row='old')}); "
)
SQLITE_MAKE = [
    f"CREATE VIRTUAL TABLE {FTS} USING fts5(body, content='', detail=none, "
    "tokenize='unicode61 remove_diacritics 0')",
    f"CREATE TRIGGER traces_searchentry_ai AFTER INSERT ON traces_searchentry BEGIN {_INSERT}END",
    f"CREATE TRIGGER traces_searchentry_ad AFTER DELETE ON traces_searchentry BEGIN {_DELETE}END",
    "CREATE TRIGGER traces_searchentry_au AFTER UPDATE ON traces_searchentry BEGIN "
    f"{_DELETE}{_INSERT}END",
    f"INSERT INTO {FTS}(rowid, body) SELECT id, {TEXT.format(row='traces_searchentry')} "
    "FROM traces_searchentry",
]
BLOB_COLUMNS = (
    '"digest" varchar(40) NOT NULL PRIMARY KEY, '
    '"size" integer unsigned NOT NULL CHECK ("size" >= 0), "data" BLOB NOT NULL'
)


def blob_table(rowid: bool) -> list[str]:
    """SQLite's blob table made anew, its rows in digest order, with or without a rowid."""
    kind = "" if rowid else " WITHOUT ROWID"
    return [
        f"CREATE TABLE traces_blob__new ({BLOB_COLUMNS}){kind}",
        "INSERT INTO traces_blob__new (digest, size, data) "
        "SELECT digest, size, data FROM traces_blob ORDER BY digest",
        "DROP TABLE traces_blob",
        "ALTER TABLE traces_blob__new RENAME TO traces_blob",
    ]


DOCUMENT = "to_tsvector('simple'::regconfig, regexp_replace(body, '[^[:alnum:]]+', ' ', 'g'))"
POSTGRES = [
    "DROP INDEX IF EXISTS traces_searchentry_document",
    "ALTER TABLE traces_searchentry DROP COLUMN IF EXISTS document",
    # fastupdate off, as migration 0022 made it: without it new rows wait in GIN's pending
    # list until a vacuum, and the planner prices the index too high to use meanwhile.
    f"CREATE INDEX traces_searchentry_document ON traces_searchentry USING GIN ({DOCUMENT}) "
    "WITH (fastupdate = off)",
]


def store_text_once(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        for statement in POSTGRES:
            schema_editor.execute(statement)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'traces_blob' "
                "AND indexdef LIKE '%%varchar_pattern_ops%%'"
            )
            for (name,) in cursor.fetchall():
                schema_editor.execute(f'DROP INDEX IF EXISTS "{name}"')
        return
    if connection.vendor != "sqlite":
        return
    for statement in blob_table(rowid=False):
        schema_editor.execute(statement)
    if not _has_fts(connection):  # built without FTS5 (migration 0022): text scanned
        return
    _register(connection)
    for statement in [*SQLITE_DROP, *SQLITE_MAKE]:
        schema_editor.execute(statement)


OLD_SQLITE = [  # migration 0022's
    f"CREATE VIRTUAL TABLE {FTS} USING fts5(body, content='traces_searchentry', "
    "content_rowid='id', tokenize='unicode61 remove_diacritics 0')",
    "CREATE TRIGGER traces_searchentry_ai AFTER INSERT ON traces_searchentry BEGIN "
    f"INSERT INTO {FTS}(rowid, body) VALUES (new.id, new.body); END",
    "CREATE TRIGGER traces_searchentry_ad AFTER DELETE ON traces_searchentry BEGIN "
    f"INSERT INTO {FTS}({FTS}, rowid, body) VALUES ('delete', old.id, old.body); END",
    "CREATE TRIGGER traces_searchentry_au AFTER UPDATE ON traces_searchentry BEGIN "
    f"INSERT INTO {FTS}({FTS}, rowid, body) VALUES ('delete', old.id, old.body); "
    f"INSERT INTO {FTS}(rowid, body) VALUES (new.id, new.body); END",
    f"INSERT INTO {FTS}({FTS}) VALUES ('rebuild')",
]
OLD_POSTGRES = [
    "DROP INDEX IF EXISTS traces_searchentry_document",
    "ALTER TABLE traces_searchentry ADD COLUMN document tsvector GENERATED ALWAYS AS "
    "(to_tsvector('simple'::regconfig, regexp_replace(body, '[^[:alnum:]]+', ' ', 'g'))) "
    "STORED",
    "CREATE INDEX traces_searchentry_document ON traces_searchentry USING GIN (document) "
    "WITH (fastupdate = off)",
]


def store_text_twice(apps, schema_editor):
    """Back to migration 0022's tables: packed text unpacked into `body` first."""
    connection = schema_editor.connection
    if connection.vendor == "postgresql":  # PostgreSQL's entries are never packed
        for statement in OLD_POSTGRES:
            schema_editor.execute(statement)
        name = schema_editor._create_index_name("traces_blob", ["digest"], suffix="_like")
        schema_editor.execute(
            f'CREATE INDEX IF NOT EXISTS "{name}" ON traces_blob (digest varchar_pattern_ops)'
        )
        return
    if connection.vendor != "sqlite":
        return
    for statement in blob_table(rowid=True):
        schema_editor.execute(statement)
    if not _has_fts(connection):
        return
    _register(connection)
    for statement in SQLITE_DROP:
        schema_editor.execute(statement)
    schema_editor.execute(
        "UPDATE traces_searchentry SET body = traces_search_text(body, packed), "
        "packed = NULL WHERE packed IS NOT NULL"
    )
    for statement in OLD_SQLITE:
        schema_editor.execute(statement)


def _has_fts(connection):
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM sqlite_master WHERE name = %s", [FTS])
        return cursor.fetchone() is not None


def _register(connection):
    connection.ensure_connection()
    connection.connection.create_function("traces_search_text", 2, _text, deterministic=True)


def _text(body, packed):
    """An entry's text (as traces.models.rows `entry_text` reads it)."""
    if packed is None:
        return body
    from traces.core.reading import blobs

    return blobs.unpack_text(packed)


class Migration(migrations.Migration):
    dependencies = [
        ("traces", "0033_report_views"),
    ]

    operations = [
        migrations.AddField(
            model_name="searchentry",
            name="packed",
            field=models.BinaryField(null=True),
        ),
        migrations.AlterField(
            model_name="searchentry",
            name="body",
            field=models.TextField(blank=True),
        ),
        migrations.RunPython(store_text_once, store_text_twice, elidable=False),
    ]
