"""Upload: the one sequence every new trace goes through, whoever sends it.

The upload form, `POST /api/traces`, a background job, a run set and `manage.py ingest`
all call `trace_upload` (or, from an async view, `trace_upload_pooled`: the same steps,
the slow one in the ingest pool). The steps are written once, here and in
`traces.services.ingest`: prepare (credentials redacted first in shared mode, then
parse, rebuild, report, compress; no database), store (the originals, the trace and its
rows), audit (`trace.upload`, when someone is named).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async

from traces import models
from traces.access.rules import Principal
from traces.core.analysis.ingest import Progress
from traces.core.analysis.pricing import PriceTable
from traces.core.reading.mapping import Mapping
from traces.services import team
from traces.services.ingest import (
    IngestResult,
    PreparedIngest,
    ingest_prepare,
    ingest_store,
    redacts,
)
from traces.services.offload import off_thread
from traces.services.prices import price_table_for

Who = Principal | str | None
"""Who uploads: the request's principal; a label (a background job keeps its uploader's
label); None for the command line and fixtures, which are not audited (as before)."""


@dataclass(frozen=True, kw_only=True)
class TraceUpload:
    """One upload's inputs, and its steps: `prepare` needs no database, `store` does."""

    files: list[tuple[str, bytes]]
    name: str
    who: Who = None
    project: models.Project | None = None
    format_name: str | None = None
    labels: Sequence[str] = ()
    mapping: Mapping | None = None
    run_set: models.RunSet | None = None
    created_by: Any = None
    """The uploading user when `who` is not a principal (a background job's)."""
    progress: Progress | None = None
    on_stored: Callable[[models.Trace], None] | None = None
    """Runs inside the trace's transaction (`ingest_store`'s `within`)."""
    prices: PriceTable | None = None
    """The project's price table, read before `prepare` when that runs in the ingest pool
    (whose threads never touch the database); read by `prepare` itself when None."""

    def prepare(self) -> PreparedIngest:
        return ingest_prepare(
            files=self.files,
            name=self.name,
            format_name=self.format_name,
            mapping=self.mapping,
            redact_credentials=redacts(self.project),
            progress=self.progress,
            prices=self.prices if self.prices is not None else price_table_for(self.project),
        )

    def store(self, prepared: PreparedIngest) -> IngestResult:
        who = self.who
        created_by = who.audit_user if isinstance(who, Principal) else self.created_by
        result = ingest_store(
            prepared,
            labels=self.labels,
            run_set=self.run_set,
            project=self.project,
            created_by=created_by,
            within=self.on_stored,
        )
        if who is not None:
            trace = result.trace
            team.audit(
                who, "trace.upload", project=trace.project_id, target=f"{trace.name} ({trace.pk})"
            )
        return result


def trace_upload(
    *,
    files: list[tuple[str, bytes]],
    name: str,
    who: Who = None,
    project: models.Project | None = None,
    format_name: str | None = None,
    labels: Sequence[str] = (),
    mapping: Mapping | None = None,
    run_set: models.RunSet | None = None,
    created_by: Any = None,
    progress: Progress | None = None,
    on_stored: Callable[[models.Trace], None] | None = None,
) -> IngestResult:
    """Prepare, store and audit one trace (several files make one trace: a Claude Code
    session and its subagents'). Raises InputRejected for non-traces. `on_stored(trace)`
    runs in the trace's own transaction: it commits with the trace or not at all."""
    upload = TraceUpload(
        files=files,
        name=name,
        who=who,
        project=project,
        format_name=format_name,
        labels=labels,
        mapping=mapping,
        run_set=run_set,
        created_by=created_by,
        progress=progress,
        on_stored=on_stored,
    )
    return upload.store(upload.prepare())


async def trace_upload_pooled(**fields: Any) -> IngestResult:
    """`trace_upload` (same keywords) from an async view: the preparing in the ingest pool
    (`traces.services.offload`), the storing in Django's thread for database work."""
    prices = await sync_to_async(price_table_for)(fields.get("project"))
    upload = TraceUpload(**fields, prices=prices)
    prepared = await off_thread(upload.prepare)  # no database in the pool's threads
    return await sync_to_async(upload.store)(prepared)
