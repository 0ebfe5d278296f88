"""Reads: fetch traces and rebuild what pages show from stored rows and blobs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.http import Http404

from traces import models
from traces.core import archive, blobs
from traces.core.credentials import mask_secrets


def trace_list() -> QuerySet[models.Trace]:
    return models.Trace.objects.defer("report").order_by("-created_at")


def trace_get(*, trace_id: Any) -> models.Trace:
    try:
        return models.Trace.objects.get(pk=trace_id)
    except (models.Trace.DoesNotExist, ValueError) as exc:
        raise Http404("No such trace") from exc


def trace_source_bytes(*, trace: models.Trace) -> bytes:
    """The file exactly as it was received (live batches concatenate back into it)."""
    return b"".join(archive.decompress(chunk.data) for chunk in trace.chunks.order_by("seq"))


def trace_source_files(*, trace: models.Trace) -> list[tuple[str, bytes]]:
    """(name, bytes) of each file, for traces made of several whole files; else empty."""
    chunks = list(trace.chunks.order_by("seq"))
    if len(chunks) < 2 or not all(chunk.filename for chunk in chunks):
        return []
    return [(chunk.filename, archive.decompress(chunk.data)) for chunk in chunks]


def blob_values(digests: list[str]) -> dict[str, Any]:
    wanted = [d for d in set(digests) if d]
    found = models.Blob.objects.filter(digest__in=wanted)
    return {blob.digest: blobs.decode(blob.data) for blob in found}


@dataclass(frozen=True)
class RequestView:
    """A call's request rebuilt from its delta chain."""

    system: Any
    tools: list[Any]
    messages: list[Any]
    prefix_len: int
    base_call: int | None


def call_get(*, trace: models.Trace, index: int) -> models.Call:
    try:
        return trace.calls.get(index=index)
    except models.Call.DoesNotExist as exc:
        raise Http404("No such call") from exc


def message_digests(*, trace: models.Trace, call: models.Call) -> list[str]:
    """Digests of every message the call's request carried, following base calls back.

    One query loads the loop's deltas; the chain is then walked in memory.
    """
    rows = trace.calls.filter(loop=call.loop, index__lte=call.index).values_list(
        "index", "base_call", "prefix_len", "appended_digests"
    )
    by_index = {index: (base, prefix, appended) for index, base, prefix, appended in rows}
    chain = []
    current: int | None = call.index
    seen: set[int] = set()
    while current is not None and current in by_index and current not in seen:
        seen.add(current)
        base, prefix, appended = by_index[current]
        chain.append((prefix, appended))
        current = base if prefix > 0 else None
    digests: list[str] = []
    for prefix, appended in reversed(chain):
        digests = digests[:prefix] + list(appended)
    return digests


def call_request(*, trace: models.Trace, call: models.Call) -> RequestView:
    digests = message_digests(trace=trace, call=call)
    values = blob_values([*digests, call.system_digest, call.tools_digest])
    return RequestView(
        system=values.get(call.system_digest),
        tools=values.get(call.tools_digest) or [],
        messages=[values.get(d) for d in digests],
        prefix_len=call.prefix_len,
        base_call=call.base_call,
    )


def call_response(*, call: models.Call) -> Any:
    if not call.response_digest:
        return None
    return blob_values([call.response_digest]).get(call.response_digest)


def call_extra(*, call: models.Call) -> Any:
    if not call.extra_digest:
        return None
    # Masked again on the way out: traces stored before a masking rule existed.
    return mask_secrets(blob_values([call.extra_digest]).get(call.extra_digest))
