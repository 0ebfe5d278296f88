"""One model call is one call, whatever the span layers that describe it.

Instrumentations stack: OpenInference's `messages.create` span (with the messages) has
the Anthropic SDK's own `anthropic.messages.create` span (usage and stop reason, no
content) as its child; a framework's LLM span wraps the provider instrumentation's;
Gemini CLI's `gen_ai.client.inference.operation.details` log record sits inside its
`llm_call` span. Chat spans linked parent to child are layers of one call: they are
merged, the content from the layer that has it (the innermost such), usage and stop
reason from the first layer, innermost first, that has them.

The layers of one call may come in one export or in several (a `SimpleSpanProcessor`
exports each span when it ends: the child first), so a layer that is not complete
(content and usage) is held until its other layer comes, and released on its own when
nothing can complete it any more: it is a root, its parent turned out not to be a chat
span, a later call began after it ended, or the input ended. A layer that comes after
its call was emitted (a late parent or child, or the same span exported twice) is
dropped: the call is counted once. So the content is kept whenever each exporter sends
spans in the order they end (one exporter, or one per layer); a content layer that
arrives after a later call's would find its call already emitted without it.

A call's log record may also come with no span to link it (Gemini CLI logs a streamed
response after the stream, outside its `llm_call` span): a call read from a log record
and one read from a span of the same loop with the same token counts, ending within
`SAME_CALL_SECONDS` of each other, are one call, the first one read kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from traces.core.records import dataclass, replace

from ...model import Exchange
from .otel_logs import LOG_SPAN_PREFIX
from .otel_spans import Span, chronological

Layer = tuple[Span, Exchange]
SAME_CALL_SECONDS = 10.0
_Fingerprint = tuple[str | None, int, int, bool]


@dataclass
class _Seen:
    parent_id: str | None


def has_content(exchange: Exchange) -> bool:
    return bool(exchange.messages) or exchange.response is not None


def _complete(exchange: Exchange) -> bool:
    return has_content(exchange) and exchange.usage is not None


class CallLayers:
    """The chat spans of one input, taken record by record: what to emit now."""

    def __init__(self) -> None:
        self._held: dict[str, Layer] = {}
        """Incomplete chat spans by span id, waiting for another layer of their call."""
        self._done: dict[str, _Seen] = {}
        """Span id of every chat span already emitted (or merged into an emitted call)."""
        self._done_parents: set[str] = set()
        self._others: set[str] = set()
        """Span ids of the spans seen that are not chat spans."""
        self._unmatched: dict[_Fingerprint, list[float]] = {}
        """End times of emitted calls by (loop, input, output tokens, from a log record),
        not yet matched by the same call read from the other signal."""

    def take(self, layers: Iterable[Layer], others: Iterable[Span] = ()) -> list[Layer]:
        """The calls to emit after this record's chat spans (`layers`) and its other
        spans, in chronological order."""
        self._others.update(span.span_id for span in others if span.span_id is not None)
        emitted: list[Layer] = []
        pool: dict[str, Layer] = dict(self._held)
        self._held = {}
        for span, exchange in layers:
            if span.span_id is None:
                emitted.append((span, exchange))  # nothing can link it to another layer
            elif self._is_late(span):
                self._mark_done(span)
            else:
                pool.setdefault(span.span_id, (span, exchange))
        for component in _components(pool):
            chain = _chain(component)
            if chain is None:  # a wrapper of several calls: each innermost span is one
                parents = {s.parent_id for s, _ in component}
                emitted.extend(layer for layer in component if layer[0].span_id not in parents)
                self._finish(component)
                continue
            merged = merge(chain)
            if _complete(merged[1]):
                emitted.append(merged)
                self._finish(chain)
            else:
                for layer in chain:
                    assert layer[0].span_id is not None
                    self._held[layer[0].span_id] = layer
        emitted.extend(self._released(emitted))
        return self._once(sorted(emitted, key=lambda layer: chronological(layer[0])))

    def close(self) -> list[Layer]:
        """Every held call, as it is: the input has ended."""
        return self._once(self._released([], everything=True))

    def _once(self, calls: list[Layer]) -> list[Layer]:
        """Without the calls already read from the other signal (span or log record)."""
        kept: list[Layer] = []
        for span, exchange in calls:
            usage = exchange.usage
            ended = span.ended_at
            if usage is None or ended is None:
                kept.append((span, exchange))
                continue
            from_log = bool(span.span_id and span.span_id.startswith(LOG_SPAN_PREFIX))
            tokens = (exchange.loop_key, usage.input_tokens, usage.output_tokens)
            others = self._unmatched.get((*tokens, not from_log), [])
            match = next((t for t in others if abs(t - ended) <= SAME_CALL_SECONDS), None)
            if match is not None:
                others.remove(match)
                continue
            self._unmatched.setdefault((*tokens, from_log), []).append(ended)
            kept.append((span, exchange))
        return kept

    def _is_late(self, span: Span) -> bool:
        """A layer of a call already emitted (or a span exported again)."""
        return (
            span.span_id in self._done
            or (span.parent_id is not None and span.parent_id in self._done)
            or span.span_id in self._done_parents
        )

    def _mark_done(self, span: Span) -> None:
        if span.span_id is not None:
            self._done[span.span_id] = _Seen(span.parent_id)
        if span.parent_id is not None:
            self._done_parents.add(span.parent_id)

    def _finish(self, layers: Iterable[Layer]) -> None:
        for span, _ in layers:
            self._mark_done(span)

    def _released(self, emitted: list[Layer], *, everything: bool = False) -> list[Layer]:
        """Held calls nothing can complete any more, merged as far as they go."""
        if not self._held:
            return []
        started = [s.started_at for s, _ in emitted if s.started_at is not None]
        latest = max(started) if started else None
        released: list[Layer] = []
        for component in _components(dict(self._held)):
            chain = _chain(component) or component
            outer = chain[0][0]
            inner = chain[-1][0]
            ended = inner.ended_at
            if (
                everything
                or outer.parent_id is None
                or outer.parent_id in self._others
                or (latest is not None and ended is not None and latest >= ended)
            ):
                released.append(merge(chain))
                self._finish(chain)
                for span, _ in chain:
                    self._held.pop(span.span_id or "", None)
        return released


def _components(pool: dict[str, Layer]) -> list[list[Layer]]:
    """The pool's spans grouped by parent links between them."""
    children: dict[str, list[str]] = {}
    for span_id, (span, _) in pool.items():
        if span.parent_id is not None and span.parent_id in pool:
            children.setdefault(span.parent_id, []).append(span_id)
    roots = [i for i, (span, _) in pool.items() if span.parent_id not in pool]
    components: list[list[Layer]] = []
    for root in roots:
        found: list[Layer] = []
        stack = [root]
        while stack:
            current = stack.pop()
            found.append(pool[current])
            stack.extend(children.get(current, ()))
        components.append(found)
    return components


def _chain(component: list[Layer]) -> list[Layer] | None:
    """The component's spans outermost first when each has at most one child, else None."""
    by_parent: dict[str | None, Layer] = {}
    for layer in component:
        parent = layer[0].parent_id
        if parent in by_parent and len(component) > 1:
            return None
        by_parent[parent] = layer
    ids = {layer[0].span_id for layer in component}
    outer = [layer for layer in component if layer[0].parent_id not in ids]
    if len(outer) != 1:
        return None
    chain = [outer[0]]
    while chain[-1][0].span_id in by_parent:
        chain.append(by_parent[chain[-1][0].span_id])
    return chain if len(chain) == len(component) else None


def merge(chain: list[Layer]) -> Layer:
    """One call from its layers (outermost first): the innermost layer with content,
    usage and stop reason from the first layer, innermost first, that has them."""
    if len(chain) == 1:
        return chain[0]
    inner_first = list(reversed(chain))
    span, exchange = next((layer for layer in inner_first if has_content(layer[1])), inner_first[0])
    usage = next((e.usage for _, e in inner_first if e.usage is not None), None)
    stop = exchange.stop_reason or next(
        (e.stop_reason for _, e in inner_first if e.stop_reason is not None), None
    )
    error = next((e.error for _, e in inner_first if e.error is not None), None)
    extra: dict[str, Any] = dict(exchange.extra)
    attributes: dict[str, Any] = {}
    for _, layer in chain:  # the inner layers' own attributes win
        found = layer.extra.get("attributes")
        if isinstance(found, dict):
            attributes.update(found)
    extra["attributes"] = attributes
    extra["layers"] = [s.name or s.span_id for s, _ in chain]
    model = exchange.model or next((e.model for _, e in inner_first if e.model), None)
    merged = replace(
        exchange,
        usage=usage,
        stop_reason=stop,
        model=model,
        error=error,
        status="error" if error else exchange.status,
        extra=extra,
    )
    return span, merged
