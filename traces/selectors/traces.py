"""Reads: fetch traces and rebuild what pages show from stored rows and blobs."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import operator
import uuid
from dataclasses import dataclass
from typing import Any

import orjson
from django.db.models import F, Q, QuerySet, TextField
from django.db.models.functions import Cast
from django.http import Http404
from django.utils import timezone

from traces import models
from traces.core.model import Message
from traces.core.outputs.content_search import search_terms
from traces.core.outputs.listquery import GROUPS, SORTS, ListQuery
from traces.core.reading import blobs
from traces.core.reading.credentials import mask_secrets
from traces.core.stored_message import message_from_json
from traces.selectors.broad_search import broad_match, is_broad
from traces.selectors.column_values import distinct_values
from traces.selectors.content import matching_traces
from traces.selectors.trace_text import indexed, text_holds, text_matches
from traces.storage import originals
from traces.storage.report_cache import load_report

LIST_COLUMNS = (
    "id",
    "name",
    "format",
    "state",
    "created_at",
    "calls_count",
    "tool_runs_count",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "flags_count",
    "outcome_kind",
    "cost_usd",
    "model",
    "agent",
    "working_dir",
    "error_results",
    "run_set",
    "project",  # unpriced rows link to their project's prices form
)
"""What a row of the list shows: summary columns only, never the report."""


def trace_list() -> QuerySet[models.Trace]:
    return models.Trace.objects.defer("report").order_by("-created_at")


def search_is_broad(q: str) -> bool:
    """Whether the search for `q` is walked trace by trace in the sort's order, its count
    capped (traces.selectors.broad_search): on SQLite, when thousands match."""
    return bool(q) and indexed(q) and is_broad(q, search_terms(q))


def trace_search(*, query: ListQuery, broad: bool | None = None) -> QuerySet[models.Trace]:
    """Traces matching the list's search and filters, in its sort order (summary columns
    only; an index for each filter and sort keeps this fast at 50,000 rows, and
    tests/web/test_list_plans.py checks that each query's plan uses one).
    The search matches names, ids, models and tool names, and the calls' text.
    `broad`: `search_is_broad(query.q)`, when the caller has asked it already."""
    traces = models.Trace.objects.only(*LIST_COLUMNS)
    if query.q:
        if search_is_broad(query.q) if broad is None else broad:
            traces = traces.filter(broad_match(query.q, search_terms(query.q)))
        else:
            traces = traces.filter(_search_match(query.q))
    if query.format:
        traces = traces.filter(format=query.format)
    if query.outcome == "live":
        traces = traces.filter(state=models.Trace.State.LIVE)
    elif query.outcome_kind:
        traces = traces.filter(outcome_kind=query.outcome_kind).exclude(
            state=models.Trace.State.LIVE
        )
    if query.rule or query.severity:
        # `id IN (…)` rather than a correlated EXISTS, which probed the rule rows once per
        # trace of the whole table: the traces that fired come from one index range.
        fired = models.TraceRule.objects.all()
        if query.rule:
            fired = fired.filter(rule=query.rule)
        if query.severity:
            fired = fired.filter(severity=query.severity)
        traces = traces.filter(pk__in=fired.order_by().values("trace_id"))
    if query.model:
        traces = traces.filter(model=query.model)
    if query.agent:
        traces = traces.filter(agent=query.agent)
    if query.project:
        traces = traces.filter(working_dir=query.project)
    if query.label:
        traces = traces.filter(labels__name=query.label)
    if query.set:
        try:
            traces = traces.filter(run_set_id=uuid.UUID(query.set))
        except ValueError:
            traces = traces.filter(run_set__name=query.set)
    if query.date_from:
        traces = traces.filter(created_at__gte=_day_start(query.date_from))
    if query.date_to:
        traces = traces.filter(created_at__lt=_day_start(query.date_to + dt.timedelta(days=1)))
    if query.cost_min is not None:
        traces = traces.filter(cost_usd__gte=query.cost_min)
    if query.cost_max is not None:
        traces = traces.filter(cost_usd__lte=query.cost_max)
    if query.calls_min is not None:
        traces = traces.filter(calls_count__gte=query.calls_min)
    if query.calls_max is not None:
        traces = traces.filter(calls_count__lte=query.calls_max)
    if query.errors:
        traces = traces.filter(error_results__gt=0)
    return traces.order_by(*_ordering(query))


def _search_match(q: str) -> Q:
    """What the search box matches: the summary text, the id, the calls' text.

    Where a trigram index serves `q`, the ids as one UNION for an `id IN (…)`: each part
    found by its own index (the trigram index, the primary key, the calls' text index),
    where one OR of them in the WHERE clause made PostgreSQL and SQLite read the whole
    table to test the content subquery row by row (issue 25). Where none serves it (one
    or two letters), that OR: the table is read once either way, and the UNION's ids
    would only add a second pass to join them back (2 to 3 times slower at 50,000).
    """
    parts = []
    with contextlib.suppress(ValueError):
        parts.append(models.Trace.objects.filter(pk=uuid.UUID(q)).order_by().values("pk"))
    terms = search_terms(q)
    if terms:  # and the calls' text (traces.selectors.content)
        parts.append(matching_traces(terms))
    if not indexed(q):
        return functools.reduce(operator.or_, (Q(pk__in=part) for part in parts), text_holds(q))
    return Q(pk__in=text_matches(q).union(*parts))


def _ordering(query: ListQuery) -> list[Any]:
    """The sort, then newest first and the id to break ties. Only cost can be unknown
    (NULL, listed last); other columns sort plainly so their index serves the sort."""
    grouped = [GROUPS[query.group]] if query.group else []
    return grouped + _sorted_by(query)


def _sorted_by(query: ListQuery) -> list[Any]:
    name = SORTS[query.sort_key]
    sign = "-" if query.descending else ""
    if query.sort_key == "date":
        return [f"{sign}created_at", f"{sign}pk"]
    if query.sort_key == "cost":
        column = F(name)
        first = column.desc(nulls_last=True) if query.descending else column.asc(nulls_last=True)
        return [first, "-created_at", "-pk"]
    return [f"{sign}{name}", "-created_at", "-pk"]


def _day_start(day: dt.date) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(day, dt.time.min))


def list_choices(*, visible: QuerySet[models.Trace] | None = None) -> dict[str, list[Any]]:
    """Values the list's filter menus offer: formats, models, labels and sets in use (of
    the `visible` traces only, when the caller may not read them all). Of every trace,
    each column's values are read by skipping through its index (`column_values`)."""
    labels = models.Label.objects.all()
    sets = models.RunSet.objects.all()
    if visible is None:
        menus = {
            name: distinct_values(models.Trace, field, skip_empty=skip_empty)
            for name, field, skip_empty in MENU_COLUMNS
        }
    else:
        labels = labels.filter(traces__in=visible.values("pk")).distinct()
        sets = sets.filter(runs__in=visible.values("pk")).distinct()
        menus = {
            name: list(
                (visible.exclude(**{field: ""}) if skip_empty else visible)
                .order_by(field)
                .values_list(field, flat=True)
                .distinct()
            )
            for name, field, skip_empty in MENU_COLUMNS
        }
    return {
        **menus,
        "labels": list(labels.values_list("name", flat=True)),
        "sets": list(sets.order_by("name").values_list("pk", "name")),
    }


MENU_COLUMNS = (
    ("formats", "format", False),
    ("models", "model", True),
    ("agents", "agent", True),
    ("projects", "working_dir", True),
)
"""(menu, column, whether '' is left out) of the list's filter menus of trace columns."""


def trace_get(*, trace_id: Any, with_report: bool = True) -> models.Trace:
    """The trace row with its report from this process's cache of decoded reports when it
    holds the row's version (traces.storage.report_cache); `with_report=False` for the
    pages that never read it (the report is then read from the row if used)."""
    try:
        trace = models.Trace.objects.defer("report").get(pk=trace_id)
        if with_report:
            load_report(trace)
    except (models.Trace.DoesNotExist, ValueError) as exc:
        raise Http404("No such trace") from exc
    return trace


def trace_source_bytes(*, trace: models.Trace) -> bytes:
    """The file exactly as it was received (live batches concatenate back into it)."""
    return b"".join(originals.chunks_bytes(originals.trace_chunks(trace)))


def trace_source_files(*, trace: models.Trace) -> list[tuple[str, bytes]]:
    """(name, bytes) of each file, for traces made of several whole files; else empty."""
    chunks = originals.trace_chunks(trace)
    if len(chunks) < 2 or not all(chunk.filename for chunk in chunks):
        return []
    contents = originals.chunks_bytes(chunks)
    return [(chunk.filename, data) for chunk, data in zip(chunks, contents, strict=True)]


def blob_values(digests: list[str]) -> dict[str, Any]:
    wanted = [d for d in set(digests) if d]
    found = models.Blob.objects.filter(digest__in=wanted).values_list("digest", "data")
    return {digest: blobs.decode(data) for digest, data in found}  # no model instances


@dataclass(frozen=True)
class RequestView:
    """A call's request rebuilt from its delta chain."""

    system: Any
    tools: list[Any]
    messages: list[Any]
    """Its messages from `first_message` on: all of them, unless the caller asked for the
    appended ones only past a size (`call_request`)."""
    prefix_len: int
    base_call: int | None
    first_message: int = 0
    """The position (from 0) of `messages[0]` in the request."""
    message_count: int = 0
    """How many messages the request carried."""


def call_get(*, trace: models.Trace, index: int) -> models.Call:
    try:
        return trace.calls.get(index=index)
    except models.Call.DoesNotExist as exc:
        raise Http404("No such call") from exc


def message_digests(
    *, trace: models.Trace, call: models.Call, column: str = "appended_digests"
) -> list[str]:
    """Digests of every message the call's request carried, following base calls back:
    the raw messages, or with `column="appended_message_digests"` the normalised ones.

    One query loads the loop's deltas; the chain is then walked in memory.
    """
    # The lists as the database's text, parsed by orjson: for the last call of a 20,000-call
    # loop, the JSON field's own decoding (the standard library's, per row) was most of it.
    rows = trace.calls.filter(loop=call.loop, index__lte=call.index).values_list(
        "index", "base_call", "prefix_len", Cast(column, output_field=TextField())
    )
    by_index = {
        index: (base, prefix, orjson.loads(text) if text else None)
        for index, base, prefix, text in rows
    }
    chain = []
    current: int | None = call.index
    seen: set[int] = set()
    while current is not None and current in by_index and current not in seen:
        seen.add(current)
        base, prefix, appended = by_index[current]
        chain.append((prefix, appended or ()))
        current = base if prefix > 0 else None
    digests: list[str] = []
    for prefix, appended in reversed(chain):
        del digests[prefix:]  # in place: copying the prefix at every step was quadratic
        digests.extend(appended)
    return digests


def call_request(
    *, trace: models.Trace, call: models.Call, whole_up_to: int | None = None
) -> RequestView:
    """The call's request. `whole_up_to`: past that many messages, only the ones the call
    appended are read (the call page folds at most that many and links the rest: reading
    and decoding 40,000 messages' blobs for the last call of a 20,000-call loop was most
    of that page's time)."""
    digests = message_digests(trace=trace, call=call)
    first = 0
    if whole_up_to is not None and len(digests) > whole_up_to:
        first = min(call.prefix_len, len(digests))
    wanted = digests[first:]
    values = blob_values([*wanted, call.system_digest, call.tools_digest])
    return RequestView(
        system=values.get(call.system_digest),
        tools=values.get(call.tools_digest) or [],
        messages=[values.get(d) for d in wanted],
        prefix_len=call.prefix_len,
        base_call=call.base_call,
        first_message=first,
        message_count=len(digests),
    )


@dataclass(frozen=True)
class ShownMessages:
    """A call's messages as ingest normalised them (see traces.core.stored_message)."""

    appended: list[Message | None]
    """One per message the request appended (None where a blob is missing)."""
    response: Message | None


def call_messages(*, call: models.Call) -> ShownMessages | None:
    """The normalised messages stored with the call; None for a call stored before they
    were kept (`manage.py reanalyze` stores them from the original)."""
    if call.appended_message_digests is None:
        return None
    digests = list(call.appended_message_digests)
    values = blob_values([*digests, call.response_message_digest])
    return ShownMessages(
        appended=[message_from_json(values.get(d)) for d in digests],
        response=message_from_json(values.get(call.response_message_digest)),
    )


def request_messages(*, trace: models.Trace, call: models.Call) -> list[Message | None] | None:
    """Every normalised message of the call's request, its delta chain walked back (None
    where a blob is missing); None when a call of the loop was stored before they were
    kept."""
    loop_rows = trace.calls.filter(loop=call.loop, index__lte=call.index)
    if loop_rows.filter(appended_message_digests__isnull=True).exists():
        return None
    digests = message_digests(trace=trace, call=call, column="appended_message_digests")
    values = blob_values(digests)
    return [message_from_json(values.get(d)) for d in digests]


def call_response(*, call: models.Call) -> Any:
    if not call.response_digest:
        return None
    return blob_values([call.response_digest]).get(call.response_digest)


def call_extra(*, call: models.Call) -> Any:
    if not call.extra_digest:
        return None
    # Masked again on the way out: traces stored before a masking rule existed.
    return mask_secrets(blob_values([call.extra_digest]).get(call.extra_digest))
