"""Original bytes in Django's storage: one zstd object per chunk of a trace and per set file.

Rows say which objects make a file and in what order (`SourceChunk`, `RunSetFile`); the
bytes live in `storages["default"]`: a folder under INSPECTOR_DATA_DIR, or an
S3-compatible bucket that every web and worker machine shares (inspector/settings.py).
Object names are built from ids and positions only, never from an uploaded file's name.

A trace's objects share one prefix, so deleting the trace removes them all once its
deletion commits, including any left by a write whose transaction rolled back.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, Storage, storages
from django.db import transaction
from django.db.models.signals import post_delete

from traces import models
from traces.core.reading import archive
from traces.stores import ThreadPoolStore, store

log = logging.getLogger(__name__)

READ_THREADS = 8
"""Objects fetched at once when a file is many chunks (a live trace): an object store
answers each GET in a round trip, so they overlap; a folder barely notices."""


def storage() -> Storage:
    return storages["default"]


def trace_prefix(trace_id: Any) -> str:
    """The folder of one trace's chunks (fanned out by the id's first characters)."""
    text = str(trace_id)
    return f"originals/{text[:2]}/{text}"


def chunk_name(trace_id: Any, seq: int) -> str:
    return f"{trace_prefix(trace_id)}/{seq:010d}.zst"


def set_prefix(run_set_id: Any) -> str:
    return f"sets/{run_set_id}"


def put(name: str, compressed: bytes) -> str:
    """Store the bytes under `name` (an existing object is replaced); the name stored."""
    return storage().save(name, ContentFile(compressed))


class OriginalMissing(LookupError):
    """A row names an object the store does not have (its folder or bucket was changed)."""


def get(name: str) -> bytes:
    store = storage()
    try:
        if _is_bucket(store):  # one GET, where open() would HEAD first
            return store.bucket.Object(store._normalize_name(name)).get()["Body"].read()
        with store.open(name, "rb") as stored:
            return stored.read()
    except FileNotFoundError as exc:
        raise OriginalMissing(name) from exc
    except Exception as exc:
        if getattr(exc, "response", {}).get("Error", {}).get("Code") in ("NoSuchKey", "404"):
            raise OriginalMissing(name) from exc
        raise


def _is_bucket(store: Storage) -> bool:
    """django-storages' S3Storage, whose boto3 bucket does batch and single-request work."""
    return hasattr(store, "bucket") and hasattr(store, "_normalize_name")


class ReaderPool(ThreadPoolStore):
    """The threads that read objects from a bucket several at a time (`get_many`), kept
    for the process's life: each thread keeps its own S3 connection."""

    thread_name = "originals"

    def workers(self) -> int:
        return READ_THREADS


def get_many(names: Sequence[str]) -> Iterator[bytes]:
    """The objects' bytes in order; from an object store, several requests at a time."""
    if len(names) < 3 or isinstance(storage(), FileSystemStorage):
        yield from (get(name) for name in names)
        return
    yield from store(ReaderPool).executor().map(get, names)


# -- a trace's chunks ---------------------------------------------------------------------
def chunk_row(trace_id: Any, seq: int, compressed: bytes, **fields: Any) -> models.SourceChunk:
    """Store one compressed chunk's object; its row, unsaved (the caller saves it in its
    transaction, after the object exists)."""
    key = put(chunk_name(trace_id, seq), compressed)
    return models.SourceChunk(trace_id=trace_id, seq=seq, key=key, **fields)


def chunk_create(trace: models.Trace, *, seq: int, data: bytes, **fields: Any) -> None:
    """A live batch of lines: compressed, stored, and its row saved."""
    chunk_row(trace.pk, seq, archive.compress(data), raw_bytes=len(data), **fields).save()


def chunk_bytes(chunk: models.SourceChunk) -> bytes:
    return archive.decompress(get(chunk.key))


def chunks_bytes(chunks: Iterable[models.SourceChunk]) -> Iterator[bytes]:
    """Each chunk's original bytes, in the order given."""
    for stored in get_many([chunk.key for chunk in chunks]):
        yield archive.decompress(stored)


def trace_chunks(trace: models.Trace) -> list[models.SourceChunk]:
    return list(trace.chunks.order_by("seq").only("key", "seq", "filename"))


def discard(names: Iterable[str]) -> None:
    """Remove objects whose rows will never exist (the ingest that wrote them failed).
    Called while that failure propagates: a store that fails too is logged, not raised."""
    for name in names:
        try:
            storage().delete(name)
        except Exception:
            log.warning("could not remove %s from storage", name, exc_info=True)


def remove_prefix(prefix: str) -> int:
    """Delete every object under the prefix (and, in a folder, the emptied folder)."""
    store = storage()
    if _is_bucket(store):
        # S3: one request per 1,000 objects, not one each (a live trace has many).
        found = store.bucket.objects.filter(Prefix=store._normalize_name(prefix) + "/")
        return sum(len(reply.get("Deleted", ())) for reply in found.delete())
    try:
        folders, files = store.listdir(prefix)
    except FileNotFoundError:
        return 0
    removed = 0
    for folder in folders:
        removed += remove_prefix(f"{prefix}/{folder}")
    for name in files:
        store.delete(f"{prefix}/{name}")
        removed += 1
    if isinstance(store, FileSystemStorage):
        with contextlib.suppress(OSError):
            os.rmdir(store.path(prefix))
    return removed


# -- set files ----------------------------------------------------------------------------
def set_file_name(run_set_id: Any, sha256: str) -> str:
    return f"{set_prefix(run_set_id)}/{sha256}.zst"


def set_file_put(run_set_id: Any, sha256: str, data: bytes) -> str:
    """A file kept beside its set (the ZIP or .eval as received); same bytes, same name."""
    return put(set_file_name(run_set_id, sha256), archive.compress(data))


def set_file_bytes(set_file: models.RunSetFile) -> bytes:
    return archive.decompress(get(set_file.key))


# -- deletion -----------------------------------------------------------------------------
def _after_commit_remove(prefix: str) -> None:
    # Robust: the rows are gone whatever the store answers; a failure is logged.
    transaction.on_commit(lambda: remove_prefix(prefix), robust=True)


def _trace_deleted(sender: Any, instance: models.Trace, **kwargs: Any) -> None:
    _after_commit_remove(trace_prefix(instance.pk))


def _run_set_deleted(sender: Any, instance: models.RunSet, **kwargs: Any) -> None:
    _after_commit_remove(set_prefix(instance.pk))


def connect_signals() -> None:
    """Deleting a trace or a set (by any path: a view, purge, a cascade) removes its
    objects once the deletion commits; a rolled-back deletion keeps them."""
    post_delete.connect(_trace_deleted, sender=models.Trace, dispatch_uid="originals-trace")
    post_delete.connect(_run_set_deleted, sender=models.RunSet, dispatch_uid="originals-set")
