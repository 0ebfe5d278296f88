"""The post-mortem as Markdown: to paste into an issue or hand to an LLM.

Trace text is untrusted: it only ever appears inside code spans or fenced blocks whose
fence is longer than any backtick run in it, so it cannot turn into markup or links.
"""

from __future__ import annotations

import re
from typing import Any

from ..formatting import count, money
from .notes import note_markdown_block
from .postmortem import PostMortem

_BACKTICKS = re.compile(r"`+")


def code(text: Any) -> str:
    """An inline code span that holds any text safely."""
    value = str(text).replace("\n", " ").replace("\r", " ")
    longest = max((len(m) for m in _BACKTICKS.findall(value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or not value else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def block(text: str, info: str = "text") -> str:
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _call_row(call: dict[str, Any], findings: list[dict[str, Any]]) -> str:
    total_in = sum((call.get("buckets") or {}).values())
    rules = ", ".join(code(f["rule"]) for f in findings) or ""
    state = code(call["error"]) if call.get("status") == "error" else code(call.get("stop_reason"))
    estimate = "" if call.get("tokens_exact", True) else "≈"
    return (
        f"| {call['index']} | {code(call.get('model') or '?')} | {estimate}{count(total_in)} "
        f"| {count(call.get('output_tokens'))} | {state} | {rules} |"
    )


def _savings(pm: PostMortem) -> list[str]:
    """The largest savings as instructions; tool names stay inside the code span."""
    if not pm.what_if_known:
        return []
    lines = ["## What would have saved the most", ""]
    if not pm.savings:
        return [*lines, "No fix found with a saving that could be computed on this run.", ""]
    lines += [
        f"{n}. {code(entry['instruction'])}: {entry['saving']}"
        for n, entry in enumerate(pm.savings, start=1)
    ]
    return [*lines, ""]


def _notes(pm: PostMortem) -> list[str]:
    """People's notes, root causes first: the note's text as written, inside a fence no
    line of it can close, so a viewer shows it and never renders it (links, HTML, images
    stay text); the author (a user name) in a code span."""
    if not pm.notes:
        return []
    lines = ["## Notes", ""]
    for note in pm.notes:
        mark = "**Root cause** on " if note.root_cause else "Note on "
        by = f" by {code(note.author)}" if note.author else ""
        at = f", {code(note.created_at)}" if note.created_at else ""
        lines.append(f"- {mark}{code(note.target)}{by}{at}")
        if note.text:
            lines += ["", note_markdown_block(note.text)]
        lines.append("")
    return lines


def render_markdown(pm: PostMortem, url: str = "") -> str:
    lines = [f"# Post-mortem: {code(pm.name)}", ""]
    if url:
        lines += [f"Trace: <{url}>", ""]
    lines += [
        f"**Outcome:** {pm.outcome.get('text', 'unknown')}",
        "",
        f"Format {code(pm.format)} · {pm.totals.get('calls', 0)} calls in "
        f"{pm.totals.get('loops', 0)} loop(s) · {pm.totals.get('tool_runs', 0)} tool runs · "
        f"{pm.totals.get('failed_calls', 0)} failed calls",
        "",
    ]
    buckets = pm.totals.get("buckets") or {}
    total_in = sum(buckets.values())
    approx = "≈" if pm.estimated else ""
    lines += [
        "## Tokens and cost",
        "",
        "| | tokens |",
        "|---|---:|",
        *[f"| {name.replace('_', ' ')} | {approx}{count(v)} |" for name, v in buckets.items()],
        f"| **input total** | {approx}{count(total_in)} |",
        f"| output | {count(pm.totals.get('output_tokens'))} |",
        "",
        f"Cost: actual {money(pm.cost.get('actual'))}, uncached {money(pm.cost.get('uncached'))}, "
        f"with the stable prefix cached {money(pm.cost.get('prefix_cached'))}.",
        "",
    ]
    if pm.unpriced_models:
        lines += [pm.unpriced_words(code), ""]
    if pm.estimated:
        lines += ["≈ marks tiktoken estimates (calls that reported no usage).", ""]
    lines += _notes(pm)
    lines += _savings(pm)
    header = [
        "| call | model | input | output | stop / error | findings |",
        "|---:|---|---:|---:|---|---|",
    ]
    if pm.first_error:
        lines += [
            "## First error",
            "",
            f"{code(pm.first_error['rule'])} on call {pm.first_error.get('call')}: "
            f"{code(pm.first_error['message'])}",
            "",
            *header,
            *[
                _call_row(c, pm.findings_for_call.get(c["index"], []))
                for c in pm.calls_around_error
            ],
            "",
        ]
    if pm.error_results:
        lines += ["## Error tool results", ""]
        for run in pm.error_results:
            where = run.get("result_call") or run.get("call")
            lines.append(
                f"- call {where if where is not None else '?'} {code(run.get('name') or '?')} "
                f"{code(run['id'])}: "
                f"{code((run.get('result_preview') or '')[:200])}"
            )
        lines.append("")
    if pm.inferred_error_results:
        lines += ["## Inferred error tool results (not flagged by the format)", ""]
        for run in pm.inferred_error_results:
            where = run.get("result_call") or run.get("call")
            lines.append(
                f"- call {where if where is not None else '?'} {code(run.get('name') or '?')} "
                f"{code(run['id'])} ({run['error_inferred']}): "
                f"{code((run.get('result_preview') or '')[:200])}"
            )
        lines.append("")
    lines += [
        "## Last calls",
        "",
        *header,
        *[_call_row(c, pm.findings_for_call.get(c["index"], [])) for c in pm.last_calls],
        "",
    ]
    lines += ["## Findings", ""]
    if not pm.findings_by_rule:
        lines += ["No findings.", ""]
    for rule, found in pm.findings_by_rule:
        lines.append(f"### {code(rule)} ({found[0]['severity']}, {len(found)})")
        lines.append("")
        for finding in found[:20]:
            where = f"call {finding['call']}" if finding.get("call") else "trace"
            lines.append(f"- {where}: {code(finding['message'])}")
        if len(found) > 20:
            lines.append(f"- … {len(found) - 20} more")
        lines.append("")
    if pm.line_errors:
        lines += ["## Unreadable lines", ""]
        lines += [f"- line {e['line']}: {code(e['message'])}" for e in pm.line_errors[:20]]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
