"""The OTLP/HTTP receiver: `POST /v1/traces`, `/v1/logs` and `/v1/metrics` (and the
same under `/api/otlp/`).

Point an OpenTelemetry SDK's OTLP/HTTP exporter here (protobuf or JSON, gzip or not).
The export is decoded and split by trace id, written to disk and queued, all on one
thread of the ingest pool (traces.capture.otlp_queue), and answered then: the exporter
waits for no database write of its spans (issue 25). The queue appends each trace id's spans as one
line to its own live trace (`otlp:<trace id>`), read by the `otel-genai` adapter like
an uploaded export: the trace page shows the loop while the agent runs, and the trace closes after
`LIVE_IDLE_SECONDS` without spans. Traces with no GenAI span (no `gen_ai.*`, `llm.*`,
`openinference.*` or `ai.*` attribute: an app's HTTP or database spans) are not stored,
unless their trace already has a live trace; the answer says how many were left out.
Spans that name a `gen_ai.conversation.id` go to that conversation's live trace
(`otlp:conversation:<id>`) whatever their trace id: Gemini CLI starts a trace per span.

Log records are split and stored the same way (under their trace's or conversation's
key, `session.id` naming the conversation too), beside the spans: the reader takes the
GenAI events that carry a call (`gen_ai.client.inference.operation.details`) and ignores
the rest. Metrics are decoded and dropped: agents that export all three signals (Gemini
CLI does) get a 200 instead of printing export errors.

The answer's partial success says what the receiver knows before queuing: spans it
could not read and traces left out for having no GenAI span. A trace the queue then
fails to store (past the size limit) is in the server log.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from traces import models
from traces.access.rules import Access, access, ingest_project, rate_limited
from traces.capture import otlp_queue
from traces.capture.lines import capturing, in_project
from traces.conf import inspector_settings
from traces.core.gcpause import cycle_collector_paused
from traces.core.reading import otlp
from traces.services import jobs
from traces.services.offload import off_thread
from traces.storage.db_scope import connection_scope


@access(Access.INGEST)
@csrf_exempt
async def receive(request: HttpRequest) -> HttpResponse:
    return await _receive(request, otlp.TRACES)


@access(Access.INGEST)
@csrf_exempt
async def receive_logs(request: HttpRequest) -> HttpResponse:
    return await _receive(request, otlp.LOGS)


@access(Access.INGEST)
@csrf_exempt
async def receive_metrics(request: HttpRequest) -> HttpResponse:
    return await _receive(request, otlp.METRICS)


async def _receive(request: HttpRequest, signal: otlp.Signal) -> HttpResponse:
    if request.method != "POST":
        return JsonResponse({"error": f"POST OTLP {signal.name} exports here."}, status=405)
    limit = int(inspector_settings()["OTLP_MAX_BYTES"])
    declared = request.headers.get("Content-Length", "")
    if (declared.isdigit() and int(declared) > limit) or len(request.body) > limit:
        return _error(
            413,
            f"The export is larger than {limit:,} bytes (INSPECTOR['OTLP_MAX_BYTES']): "
            "lower the exporter's batch size.",
        )
    # Decoding takes a while for a big batch: in the ingest pool, off the event loop.
    return await off_thread(_accept, request, signal)


def _accept(request: HttpRequest, signal: otlp.Signal) -> HttpResponse:
    """Decode, keep, spool and queue an export, and its answer, all on one ingest
    thread. Each step used to hop to a thread of its own (decoding and spooling in the
    pool, the project, the keep and the queue through `sync_to_async`): five handovers
    an export, each waiting for its thread and for the event loop while the exporter
    waited. The database work runs in one `connection_scope`."""
    content_type = request.headers.get("Content-Type", "")
    protobuf = otlp.media_type(content_type) == otlp.PROTOBUF
    encoding = request.headers.get("Content-Encoding", "")
    split = _split(request.body, content_type, encoding, signal)
    if isinstance(split, otlp.OtlpRejected):
        return _error(split.status, str(split))
    with connection_scope():
        project = ingest_project(request)
        if project is None:
            return _error(403, "This Loop Inspector token cannot record here.")
        if signal is otlp.METRICS:  # decoded (a bad body is a 400) and dropped
            body = otlp.response_body(protobuf=protobuf, rejected=0, message="", signal=signal)
            return HttpResponse(body, content_type=otlp.PROTOBUF if protobuf else otlp.JSON)
        token = getattr(getattr(request, "_principal", None), "token", None)
        kept = _keep(split, project, token.pk if token is not None else None)
        if isinstance(kept, int):  # the token's traces per minute are used up: nothing stored
            response = _error(429, f"Rate limit of this API token reached: retry in {kept} s.")
            response["Retry-After"] = str(kept)
            return response
        if kept.traces:
            # Answered once the export is durable (fsynced file, committed job): the
            # queue stores it (traces.capture.otlp_queue).
            otlp_queue.queue_export(_spool(kept.traces), project, len(kept.traces))
    body = otlp.response_body(
        protobuf=protobuf, rejected=kept.rejected, message="; ".join(kept.problems), signal=signal
    )
    return HttpResponse(body, content_type=otlp.PROTOBUF if protobuf else otlp.JSON)


def _split(
    body: bytes, content_type: str, content_encoding: str, signal: otlp.Signal = otlp.TRACES
) -> otlp.SplitRequest | otlp.OtlpRejected:
    try:
        with cycle_collector_paused():  # a graph of small acyclic objects (traces.core.gcpause)
            decoded = otlp.decode(
                body,
                content_type=content_type,
                content_encoding=content_encoding,
                max_bytes=int(inspector_settings()["OTLP_MAX_DECOMPRESSED_BYTES"]),
                signal=signal,
            )
    except otlp.OtlpRejected as exc:
        return exc
    if signal is otlp.METRICS:
        return otlp.SplitRequest()
    keys = otlp.LOG_KEYS if signal is otlp.LOGS else otlp.SPAN_KEYS
    return otlp.split_by_trace(decoded, keys)


@dataclass
class Kept:
    """What an export queues: its traces to store, and the answer's partial success."""

    traces: list[tuple[str, str, otlp.TraceGroup]]
    """(capture key in the project, trace name, its spans)."""
    rejected: int
    problems: list[str]


def _keep(
    split: otlp.SplitRequest, project: models.Project, token_id: int | None = None
) -> Kept | int:
    """The traces to queue (rejected spans and messages for the answer), or the seconds
    to wait when the traces this export would create pass the token's
    TOKEN_UPLOADS_PER_MINUTE (each new trace counts as one upload, whatever the number of
    exports: issue 26 found a per-span exporter throttled at 61 exports a minute while one
    export creating 10,000 traces counted as one).

    Traces with no GenAI span are kept only when their key has a live trace now (one
    query for the whole export). In the caller's `connection_scope`."""
    rejected = split.rejected
    problems = list(split.problems)
    ignored = 0
    groups = list(split.groups.values())
    keys = {group.key: in_project(group.key, project) for group in groups}
    live_now = capturing(list(keys.values()))
    created = sum(1 for g in groups if g.genai and keys[g.key] not in live_now)
    wait = rate_limited(token_id, Access.INGEST, "POST", 0, uploads=created)
    if wait:
        return wait
    kept: list[tuple[str, str, otlp.TraceGroup]] = []
    for group in groups:
        key = keys[group.key]
        if not group.genai and key not in live_now:
            ignored += group.spans
            continue
        name = f"OTel · {group.service or 'trace'} · {_short(group)}"
        kept.append((key, name, group))
        rejected += group.rejected
    if ignored:
        what = "log record(s)" if split.logs else "span(s)"
        problems.append(
            f"{ignored} {what} of traces with no GenAI span or event (gen_ai.*, llm.*, "
            "openinference.*) were not stored"
        )
    return Kept(kept, rejected, problems)


def _spool(traces: list[tuple[str, str, otlp.TraceGroup]]) -> jobs.ReceivedUpload:
    """Each trace's export line, written durably (the ingest pool: no database)."""
    return otlp_queue.spool(
        [
            otlp_queue.QueuedTrace(key, name, group.genai, otlp.export_line(group))
            for key, name, group in traces
        ]
    )


def _short(group: otlp.TraceGroup) -> str:
    return group.conversation[:13] if group.conversation else group.trace_id[:8]


def _error(status: int, message: str) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)
