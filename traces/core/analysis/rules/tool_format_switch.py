"""Rule tool-format-switch."""

from __future__ import annotations

from collections.abc import Iterator

from ._common import SentResult, is_json_document, sent_results
from .base import Finding, LintContext, Rule
from .registry import register


@register
class ToolFormatSwitch(Rule):
    """One tool answering sometimes in JSON, sometimes in prose.

    What it finds
    A tool whose successful, non-empty results in this trace are a JSON object or array
    some of the time and plain text the rest, once it has at least `min_results`
    results (default 3) with at least `min_each` of each kind (default 1). The finding
    sits on the first result that switched away from the tool's first format.

    Why it matters
    The model has to re-derive the result's shape mid-run, and it does so worst on the
    complicated cases (where more data came back), which is exactly when a tool tends
    to switch format.

    Example
    `search_orders` returns a JSON array when it finds orders and "No orders found for
    this buyer." when it does not.

    How to fix
    Keep one format per tool: an empty JSON list (`{"orders": [], "note": "no orders
    since 2026-01-01"}`) rather than a sentence, or prose every time for tools the model
    reads rather than queries.
    """

    id = "tool-format-switch"
    severity = "info"
    message = (
        "{name} answered {json} time(s) as JSON and {prose} time(s) as prose; this result"
        " is {kind}: keep one format per tool"
    )
    defaults = {"min_results": 3, "min_each": 1}

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        by_tool: dict[str, list[tuple[SentResult, bool]]] = {}
        for sent in sent_results(ctx):
            if not sent.run.name or sent.block.is_error:
                continue
            if not sent.block.text.strip():
                continue
            by_tool.setdefault(sent.run.name, []).append((sent, is_json_document(sent.block.text)))
        for name in sorted(by_tool):
            results = by_tool[name]
            json_count = sum(1 for _, is_json in results if is_json)
            prose_count = len(results) - json_count
            if len(results) < int(self.options["min_results"]):
                continue
            if min(json_count, prose_count) < int(self.options["min_each"]):
                continue
            first_kind = results[0][1]
            switched = next(sent for sent, is_json in results if is_json != first_kind)
            yield self.finding(
                switched.call,
                switched.block.tool_id,
                name=name,
                json=json_count,
                prose=prose_count,
                kind="JSON" if not first_kind else "prose",
            )
