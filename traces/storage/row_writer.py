"""Insert many rows of one model with plain SQL: the ORM's per-object cost dominated ingest.

`bulk_create` builds a model instance per row and runs every value through the field's
`pre_save`/`get_db_prep_save` chain: on a 10,000-call trace that was most of the ingest
time. Here each column's conversion is decided once per field: plain integers, floats,
booleans and text go to the driver as they are; every other field (JSON, the NUL-safe
text fields on PostgreSQL, dates) keeps its own `get_db_prep_save`, so what is stored is
exactly what the ORM would store. SQLite and PostgreSQL take the same SQL.
"""

from __future__ import annotations

import datetime
import functools
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from django.db import connection, models

from traces.fields import NulSafeCharField, NulSafeTextField

# Exact classes whose prepared value is the Python value itself for the values we write
# (ints, floats, bools, str, None). Subclasses are not assumed to behave the same.
_PLAIN = frozenset(
    {
        models.IntegerField,
        models.PositiveIntegerField,
        models.PositiveSmallIntegerField,
        models.SmallIntegerField,
        models.BigIntegerField,
        models.PositiveBigIntegerField,
        models.FloatField,
        models.BooleanField,
        models.CharField,
        models.TextField,
    }
)
# Plain on SQLite (it holds NUL as it is).
_NUL_SAFE = frozenset({NulSafeCharField, NulSafeTextField})


def _converter(field: models.Field) -> Callable[[Any], Any] | None:
    """None when the value goes to the driver unchanged; else the field's own preparation."""
    kind = type(field)
    sqlite = connection.vendor == "sqlite"
    if kind in _PLAIN or (kind in _NUL_SAFE and sqlite):
        return None
    if sqlite and isinstance(field, models.JSONField) and field.encoder is None:
        return _sqlite_json(field)

    return _repeats_remembered(lambda value: field.get_db_prep_save(value, connection))


def _repeats_remembered(prepare: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`prepare`, run once for a run of the same value: a foreign key column holds the
    one trace's id in every row, and the field's preparation (a UUID through Django's
    chain) was a tenth of storing a 20,000-call trace. Only the identical object of an
    immutable type is taken for a repeat (`is`: a list could have changed in between), so
    what is stored is what `prepare` gives for that value."""
    last: list[Any] = [_NOTHING, None]

    def remembered(value: Any) -> Any:
        if value is last[0]:
            return last[1]
        prepared = prepare(value)
        if type(value) in _IMMUTABLE:
            last[0], last[1] = value, prepared
        return prepared

    return remembered


_NOTHING = object()
_IMMUTABLE = frozenset({uuid.UUID, str, int, float, bool, datetime.datetime, datetime.date})


def _sqlite_json(field: models.JSONField) -> Callable[[Any], Any]:
    """SQLite stores JSON as text: a list of strings (digests, ids) is written by orjson,
    anything else by the field itself."""

    def prepare(value: Any) -> Any:
        if type(value) is list and all(type(item) is str for item in value):
            try:
                return orjson.dumps(value).decode()
            except orjson.JSONEncodeError:  # a lone surrogate: json.dumps escapes it
                pass
        return field.get_db_prep_save(value, connection)

    return prepare


@dataclass(frozen=True, slots=True)
class PreparedRows:
    """An INSERT and its rows, every value already as the driver takes it: built before
    the storing transaction opens (`prepare_rows`), written inside it (`write_rows`), so
    the write lock is held for the statements alone."""

    sql: str
    rows: list[Sequence[Any]]
    per_statement: int


def prepare_rows(
    model: type[models.Model],
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    rows_per_statement: int = 1,
) -> PreparedRows:
    """`insert_rows`' statement and converted rows, without writing them."""
    meta = model._meta
    fields = [meta.get_field(name) for name in columns]  # attnames ("trace_id") resolve too
    return _prepared(
        meta.db_table, fields, [_converter(f) for f in fields], rows, rows_per_statement
    )


def _prepared(
    table: str,
    fields: Sequence[Any],
    converters: Sequence[Callable[[Any], Any] | None],
    rows: Iterable[Sequence[Any]],
    rows_per_statement: int,
) -> PreparedRows:
    quote = connection.ops.quote_name
    sql = (
        f"INSERT INTO {quote(table)} "
        f"({', '.join(quote(field.column) for field in fields)}) "
        f"VALUES ({', '.join(['%s'] * len(fields))})"
    )
    convert = [(index, fn) for index, fn in enumerate(converters) if fn is not None]
    per_statement = min(rows_per_statement, _max_params() // len(fields)) or 1
    converted: list[Sequence[Any]] = []
    for row in rows:
        if convert:
            values = list(row)
            for index, fn in convert:
                values[index] = fn(values[index])
            row = values
        converted.append(row)
    return PreparedRows(sql, converted, per_statement)


def write_rows(prepared: PreparedRows, *, batch: int = 2000) -> int:
    """Run a prepared INSERT for its rows in the current transaction; the count."""
    rows = prepared.rows
    with connection.cursor() as cursor:
        for start in range(0, len(rows), batch):
            part = rows[start : start + batch]
            if prepared.per_statement > 1:
                multi_row_statements(cursor, prepared.sql, part, prepared.per_statement)
            else:
                cursor.executemany(prepared.sql, part)
    return len(rows)


def insert_rows(
    model: type[models.Model],
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    batch: int = 2000,
    rows_per_statement: int = 1,
) -> int:
    """Insert `rows` (tuples in the order of `columns`, attribute names such as
    "trace_id") into `model`'s table in the current transaction; returns the count.

    `rows_per_statement` > 1 writes each batch as multi-row `INSERT ... VALUES (...), (...)`
    statements (as many rows as the database's parameter limit allows) instead of one
    statement a row: see `multi_row_statements`."""
    prepared = prepare_rows(model, columns, rows, rows_per_statement=rows_per_statement)
    return write_rows(prepared, batch=batch)


def prepare_new_instances(
    model: type[models.Model], instances: Sequence[models.Model]
) -> PreparedRows:
    """The INSERT `bulk_create` would run for unsaved instances whose primary key is set
    (a UUID): every concrete column, each value through its field's `pre_save(add=True)`
    (`auto_now_add` stamps the instance, as `bulk_create` does) and `get_db_prep_save`.
    Written by `write_instances`, which marks them saved."""
    sqlite = connection.vendor == "sqlite"
    fields = [field for field in model._meta.concrete_fields if not field.generated]
    converters: list[Callable[[Any], Any] | None] = [
        None
        if type(field) in _PLAIN or (type(field) in _NUL_SAFE and sqlite)
        else functools.partial(_db_prep_save, field)
        for field in fields
    ]
    for instance in instances:
        if instance.pk is None:
            raise ValueError("prepare_new_instances needs each instance's primary key set")
    rows = ([field.pre_save(instance, True) for field in fields] for instance in instances)
    return _prepared(model._meta.db_table, fields, converters, rows, 1)


def _db_prep_save(field: models.Field, value: Any) -> Any:
    return field.get_db_prep_save(value, connection)


def write_instances(prepared: PreparedRows, instances: Sequence[models.Model]) -> int:
    """Write `prepare_new_instances`' INSERT; the instances are then saved ones (as
    `bulk_create` leaves them: not adding, in this database)."""
    count = write_rows(prepared)
    for instance in instances:
        instance._state.adding = False
        instance._state.db = connection.alias
    return count


def multi_row_statements(
    cursor: Any, sql: str, rows: Sequence[Sequence[Any]], per_statement: int
) -> None:
    """Run the one-row INSERT `sql` for `rows` as statements of `per_statement` rows each.

    Why: SQLite's FTS5 writes its pending terms out as a new index segment at the end of
    every statement, so a table whose insert trigger feeds an FTS5 index (the content
    search's, migration 0022) pays a segment and its merges per row under `executemany`:
    for 20,000 calls' text 3.2 s against 1.0 s in statements of 500 rows (bench/floor.py).
    The rows stored, and the index, are the same."""
    head, marks = sql.rsplit(" VALUES ", 1)
    for start in range(0, len(rows), per_statement):
        part = rows[start : start + per_statement]
        cursor.execute(
            f"{head} VALUES {', '.join([marks] * len(part))}",
            [value for row in part for value in row],
        )


def _max_params() -> int:
    """How many parameters one statement may bind: SQLite's compiled limit when the
    driver says it (Django assumes the old default of 999), else Django's figure."""
    limit = connection.features.max_query_params or 65535
    if connection.vendor == "sqlite":
        connection.ensure_connection()
        getlimit = getattr(connection.connection, "getlimit", None)
        if getlimit is not None:
            import sqlite3

            limit = getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    return int(limit)


def insert_instances(model: type[models.Model], instances: Sequence[models.Model]) -> int:
    """`insert_rows` of unsaved instances (every concrete column but an auto primary key):
    `bulk_create`'s result for rows nothing reads back, at `insert_rows`' cost."""
    meta = model._meta
    columns = [
        field.attname
        for field in meta.concrete_fields
        if not (field.primary_key and isinstance(field, models.AutoField))
    ]
    return insert_rows(
        model, columns, ([getattr(row, name) for name in columns] for row in instances)
    )
