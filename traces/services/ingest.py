"""Ingest's steps: bytes in, a stored trace out; and a stored trace read again.

Every way a trace arrives (the upload page, `POST /api/traces`, a background job,
`manage.py ingest`, a run set) runs these steps through `traces.services.upload`, so each
is prepared, redacted and stored the same way; `trace_reanalyze` reads a stored trace
again with the current core. Preparing needs no database (the web layer runs it in its
ingest pool); storing writes the originals, then the trace and its rows
(`traces.storage.rows`) in one transaction.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from traces import models
from traces.access.rules import local_mode
from traces.conf import limits, price_table
from traces.core.analysis.ingest import Progress, analyze_bytes, analyze_files
from traces.core.analysis.pricing import PriceTable
from traces.core.analysis.whatif import Basis
from traces.core.gcpause import without_cycle_collection
from traces.core.model import Trace as CoreTrace
from traces.core.outputs.report import report_and_basis
from traces.core.reading import archive
from traces.core.reading.mapping import Mapping
from traces.core.reading.redact import merge_fields
from traces.core.reading.upload_redaction import redact_upload
from traces.selectors.traces import trace_source_bytes, trace_source_files
from traces.services.labels import trace_set_labels
from traces.services.mappings import stored_mapping
from traces.services.prices import price_table_for
from traces.storage import originals, search_index
from traces.storage.report_parts import store_report_parts
from traces.storage.rows import store_rule_counts, store_trace_rows, summary_fields
from traces.storage.transient import retrying
from traces.storage.usage import store_usage_rows


@dataclass(frozen=True)
class IngestResult:
    trace: models.Trace
    core: CoreTrace


def upload_formats() -> list[tuple[str, str]]:
    """(name, label) of each format an upload may name: pages list formats through here
    and never import the readers themselves."""
    from traces.core.reading.formats.registry import adapters

    return [(adapter.name, adapter.label) for adapter in adapters()]


def redacts(project: models.Project | None) -> bool:
    """Shared mode redacts credentials from originals unless the project keeps them."""
    return not local_mode() and not (project is not None and project.keep_originals)


@dataclass(frozen=True)
class PreparedIngest:
    """Everything an ingest stores, computed without touching the database."""

    core: CoreTrace
    report: dict[str, Any]
    files: list[tuple[str, bytes]]
    compressed: list[bytes]
    sha256: str
    name: str
    source_filename: str
    redacted: dict[str, int]
    """Credentials redacted from the files before anything was read: name -> count."""
    basis: Basis | None = None
    """The report's what-if basis, built with it: its stored views and parts use it."""


@without_cycle_collection  # a trace's rows are many acyclic objects
def ingest_prepare(
    *,
    files: list[tuple[str, bytes]],
    name: str,
    format_name: str | None = None,
    mapping: Mapping | None = None,
    redact_credentials: bool = False,
    progress: Progress | None = None,
    prices: PriceTable | None = None,
) -> PreparedIngest:
    """Parse, rebuild, report and compress: the slow, CPU-bound half of an ingest. It needs
    no database, so the web layer runs it in its ingest pool (see `traces.services.offload`).

    With `redact_credentials` (shared mode, see `redacts`) the credentials are removed
    first, so nothing derived holds them. `prices`: the project's price table
    (`traces.services.prices.price_table_for`); the instance's when None. Raises
    InputRejected for non-traces.
    """
    prices = prices or price_table()
    redacted: dict[str, int] = {}
    if redact_credentials:
        cleaned = [redact_upload(filename, data, limits()) for filename, data in files]
        files = [(filename, result.data) for filename, result in cleaned]
        redacted = merge_fields(*(result.fields for _, result in cleaned))
    if len(files) == 1:
        filename, data = files[0]
        # Compressing and hashing the original release the GIL: they run beside the parse.
        with ThreadPoolExecutor(max_workers=1) as pool:
            archived = pool.submit(_archive, data)
            core = analyze_bytes(
                data,
                filename=filename,
                format_name=format_name,
                limits=limits(),
                mapping=mapping,
                progress=progress,
            )
            report, basis = report_and_basis(core, prices=prices)
            compressed, sha256 = archived.result()
        return PreparedIngest(
            core,
            report,
            files,
            [compressed],
            sha256,
            name or filename or "trace",
            filename,
            redacted,
            basis,
        )
    core = analyze_files(files, format_name=format_name, limits=limits(), mapping=mapping)
    report, basis = report_and_basis(core, prices=prices)
    label = f"{files[0][0]} (+{len(files) - 1} file{'s' if len(files) > 2 else ''})"
    compressed_files = [archive.compress(data) for _, data in files]
    return PreparedIngest(
        core, report, files, compressed_files, "", name or label, label, redacted, basis
    )


@without_cycle_collection
def ingest_store(
    prepared: PreparedIngest,
    *,
    labels: Sequence[str] = (),
    run_set: models.RunSet | None = None,
    project: models.Project | None = None,
    created_by: Any = None,
    within: Callable[[models.Trace], None] | None = None,
) -> IngestResult:
    """Write a prepared ingest: the original's objects to storage first, then the trace and
    its rows in one transaction (the objects are removed again if that fails). `within`
    runs inside that transaction, once the rows are written: what must commit with the
    trace or not at all (a background job marked done with it, so a worker killed after
    the commit leaves no job that a recovery would ingest a second time)."""
    trace_id = uuid.uuid4()
    chunks = _chunk_rows(trace_id, prepared)
    try:
        trace = retrying(
            lambda: _store_trace(
                prepared, trace_id, chunks, labels, run_set, project, created_by, within
            ),
            what=f"storing trace {trace_id}",
        )
    except BaseException:
        originals.discard(chunk.key for chunk in chunks)
        raise
    return IngestResult(trace, prepared.core)


def _chunk_rows(trace_id: uuid.UUID, prepared: PreparedIngest) -> list[models.SourceChunk]:
    """Store each compressed file in storage; their chunk rows, unsaved. Several files are
    one chunk each, with its name; one file is one chunk of all the lines."""
    single = len(prepared.files) == 1
    rows: list[models.SourceChunk] = []
    try:
        for seq, ((filename, data), packed) in enumerate(
            zip(prepared.files, prepared.compressed, strict=True)
        ):
            lines = prepared.core.lines_total if single else 0
            rows.append(
                originals.chunk_row(
                    trace_id,
                    seq,
                    packed,
                    raw_bytes=len(data),
                    line_count=lines,
                    filename="" if single else filename[:300],
                )
            )
    except BaseException:
        originals.discard(row.key for row in rows)
        raise
    return rows


def _store_trace(
    prepared: PreparedIngest,
    trace_id: uuid.UUID,
    chunks: list[models.SourceChunk],
    labels: Sequence[str],
    run_set: models.RunSet | None,
    project: models.Project | None,
    created_by: Any,
    within: Callable[[models.Trace], None] | None = None,
) -> models.Trace:
    core, files = prepared.core, prepared.files
    with transaction.atomic():
        trace = _create_trace(
            core,
            prepared.report,
            name=prepared.name,
            source_filename=prepared.source_filename,
            source_bytes=sum(len(data) for _, data in files),
            source_sha256=prepared.sha256,
            labels=labels,
            run_set=run_set,
            project=project,
            created_by=created_by,
            redacted=prepared.redacted,
            trace_id=trace_id,
            basis=prepared.basis,
        )
        models.SourceChunk.objects.bulk_create(chunks)
        store_trace_rows(trace, core)
        if within is not None:
            within(trace)
    return trace


def _create_trace(
    core: CoreTrace,
    report: dict[str, Any],
    *,
    name: str,
    source_filename: str,
    source_bytes: int,
    source_sha256: str,
    labels: Sequence[str] = (),
    run_set: models.RunSet | None = None,
    project: models.Project | None = None,
    created_by: Any = None,
    redacted: dict[str, int] | None = None,
    trace_id: uuid.UUID | None = None,
    basis: Basis | None = None,
) -> models.Trace:
    trace = models.Trace.objects.create(
        id=trace_id or uuid.uuid4(),
        project=project or models.Project.default(),
        created_by=created_by,
        redacted=redacted or {},
        name=name[:300],
        format=core.format,
        detection_reason=core.detection_reason[:500],
        source_filename=source_filename[:300],
        source_bytes=source_bytes,
        source_sha256=source_sha256,
        report=report,
        run_set=run_set,
        **summary_fields(core, report),
    )
    store_rule_counts(trace, report)
    store_usage_rows(trace, report)
    store_report_parts(trace, report, basis=basis)
    if labels:
        trace_set_labels(trace=trace, labels=labels)
    return trace


@without_cycle_collection  # a trace's rows are many acyclic objects
def trace_reanalyze(*, trace: models.Trace) -> IngestResult:
    """Run the current core again on a stored trace's original bytes and replace its rows
    and report: after an upgrade brings new rules, formats or prices."""
    files = trace_source_files(trace=trace)
    mapping = stored_mapping(trace.report)
    format_name = None if mapping is not None else trace.format
    if files:
        core = analyze_files(files, format_name=format_name, limits=limits(), mapping=mapping)
    else:
        data = trace_source_bytes(trace=trace)
        core = analyze_bytes(
            data,
            filename=trace.source_filename,
            format_name=format_name,
            limits=limits(),
            mapping=mapping,
        )
    report, basis = report_and_basis(core, prices=price_table_for(trace.project_id))

    def replace_rows() -> None:
        with transaction.atomic():
            trace.calls.all().delete()
            trace.tool_runs.all().delete()
            trace.line_errors.all().delete()
            search_index.clear(trace)
            for field, value in {**summary_fields(core, report), "report": report}.items():
                setattr(trace, field, value)
            trace.save()
            store_rule_counts(trace, report)
            store_usage_rows(trace, report)
            store_report_parts(trace, report, basis=basis)
            store_trace_rows(trace, core)

    retrying(replace_rows, what=f"reanalysing trace {trace.pk}")
    return IngestResult(trace, core)


def _archive(data: bytes) -> tuple[bytes, str]:
    return archive.compress(data), hashlib.sha256(data).hexdigest()
