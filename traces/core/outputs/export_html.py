"""The post-mortem as one self-contained HTML file: styles, SVG and data inline, no script.

It opens from disk with no network. Every piece of trace text passes through `escape`;
the diagram comes from the core's escaping SVG builder. Links inside the file point at
anchors in the file itself.
"""

from __future__ import annotations

from typing import Any

from ..formatting import count, money, percent
from .escaping import escape_html
from .notes import Note, note_html
from .postmortem import PostMortem, build_postmortem
from .render import sequence_view
from .render.links import ANCHORS

EXPORT_WINDOW = 120
EXPORT_CSS = """
body { max-width: 1200px; margin: 0 auto; padding: 1.5rem; }
.export-note { color: var(--muted); font-size: .85rem; }
.sequence-scroll svg { max-width: none; }
@media print { .sequence-scroll { overflow: visible; } }
"""


def e(value: Any) -> str:
    return escape_html("" if value is None else str(value))


def _anchor(call: Any) -> str:
    """The id of call `call`'s row, the target of `ANCHORS.call(call)`."""
    return ANCHORS.call(call).removeprefix(ANCHORS.base)


def render_export(
    report: dict[str, Any],
    *,
    name: str,
    css: str,
    source_url: str = "",
    notes: tuple[Note, ...] | list[Note] = (),
) -> str:
    """The whole document. `css` is the app's stylesheet, inlined; `notes` are people's
    notes on the trace (rendered by `note_html`: no raw HTML, no image, safe links only)."""
    pm = build_postmortem(report, name, notes)
    loop = (report.get("outcome") or {}).get("loop")
    diagram = ""
    note = ""
    if report.get("loops"):
        view = sequence_view(report, links=ANCHORS, loop=loop, start=1, window=EXPORT_WINDOW)
        diagram = view["svg"]
        meta = view["window"]
        if meta["total"] > meta["shown"]:
            note = (
                f"Calls {meta['start']}–{meta['end']} of {meta['total']} in loop "
                f"{meta['loop']}; open the trace in Loop Inspector for the rest."
            )
    parts = [
        "<!doctype html>",
        '<html lang="en" data-theme="light"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Post-mortem · {e(name)}</title>",
        f"<style>{css}\n{EXPORT_CSS}</style>",
        "</head><body><main>",
        f"<h1>Post-mortem: {e(name)}</h1>",
        f'<p class="muted"><span class="tag">{e(pm.format)}</span>'
        + (f' · <a href="{e(source_url)}">{e(source_url)}</a>' if source_url else "")
        + "</p>",
        f'<p class="outcome-line outcome-{e(pm.outcome.get("kind"))}"><strong>'
        f"{e(pm.outcome.get('text', 'Outcome unknown.'))}</strong></p>",
        _stats(pm),
        _notes(pm),
        '<section class="panel"><h2>The loop, call by call</h2>',
        f'<div class="sequence-scroll">{diagram}</div>',
        f'<p class="export-note">{e(note)}</p>' if note else "",
        "</section>",
        _tokens_section(pm),
        _savings(pm),
        _first_error(pm),
        _error_results(pm),
        _calls_section("The last calls", pm.last_calls, pm),
        _findings(pm),
        _all_calls(report, pm),
        '<p class="export-note">Exported by Loop Inspector. Self-contained: no script, no '
        "network.</p>",
        "</main></body></html>",
    ]
    return "\n".join(part for part in parts if part)


def _stats(pm: PostMortem) -> str:
    totals = pm.totals
    cells = [
        ("Calls", count(totals.get("calls"))),
        ("Failed calls", count(totals.get("failed_calls"))),
        ("Tool runs", count(totals.get("tool_runs"))),
        ("Output tokens", count(totals.get("output_tokens"))),
        ("Actual cost", money(pm.cost.get("actual")) + (" ≈" if pm.estimated else "")),
    ]
    body = "".join(f"<div><dt>{e(k)}</dt><dd>{e(v)}</dd></div>" for k, v in cells)
    return f'<dl class="stats">{body}</dl>'


def _notes(pm: PostMortem) -> str:
    if not pm.notes:
        return ""
    items = []
    for note in pm.notes:
        on = e(note.target)
        if note.call is not None:
            on = f'<a href="{e(ANCHORS.call(note.call))}">{on}</a>'
        mark = '<span class="badge badge-error">root cause</span> ' if note.root_cause else ""
        by = f" · {e(note.author)}" if note.author else ""
        shown = f"{note.created_at[:10]} {note.created_at[11:16]} UTC"
        at = (
            f' · <time datetime="{e(note.created_at)}">{e(shown)}</time>' if note.created_at else ""
        )
        root = " note-root" if note.root_cause else ""
        items.append(
            f'<li class="note{root}">{mark}<span class="muted small">{on}{by}{at}</span>'
            f'<div class="note-text">{note_html(note.text)}</div></li>'
        )
    return f'<section class="panel"><h2>Notes</h2><ul class="notes">{"".join(items)}</ul></section>'


def _share(value: float, total: float) -> str:
    """A bucket's share of the input, whole percent as on the trace page."""
    return percent(100 * value / total if total else 0, scale=1, digits=0)


def _tokens_section(pm: PostMortem) -> str:
    buckets = pm.totals.get("buckets") or {}
    total = sum(buckets.values()) or 0
    approx = "≈ " if pm.estimated else ""
    rows = "".join(
        f'<tr><td>{e(key.replace("_", " "))}</td><td class="num">{approx}{count(value)}</td>'
        f'<td class="num">{_share(value, total)}</td></tr>'
        for key, value in buckets.items()
    )
    return (
        '<section class="panel"><h2>Where the tokens went</h2><table class="data buckets">'
        '<thead><tr><th>Input bucket</th><th class="num">Tokens</th>'
        '<th class="num">Share</th></tr></thead>'
        f"<tbody>{rows}</tbody><tfoot><tr><th>Input total</th>"
        f'<td class="num">{approx}{count(total)}</td><td></td></tr></tfoot></table>'
        f"<p>Cost: actual {e(money(pm.cost.get('actual')))}, uncached "
        f"{e(money(pm.cost.get('uncached')))}, with the stable prefix cached "
        f"{e(money(pm.cost.get('prefix_cached')))}.</p>"
        + (f'<p class="unpriced">{e(pm.unpriced_words())}</p>' if pm.unpriced_models else "")
        + "</section>"
    )


def _savings(pm: PostMortem) -> str:
    if not pm.what_if_known:
        return ""
    if not pm.savings:
        body = '<p class="muted">No fix found with a saving that could be computed.</p>'
    else:
        rows = "".join(
            f"<li><strong>{e(entry['instruction'])}</strong>: {e(entry['saving'])}</li>"
            for entry in pm.savings
        )
        body = f'<ol class="savings">{rows}</ol>'
    return f'<section class="panel"><h2>What would have saved the most</h2>{body}</section>'


def _first_error(pm: PostMortem) -> str:
    if pm.first_error is None:
        return '<section class="panel"><h2>No error-level finding</h2></section>'
    f = pm.first_error
    return (
        '<section class="panel panel-error"><h2>Where it first went wrong</h2>'
        f'<p><span class="badge badge-error">error</span> <code>{e(f["rule"])}</code> on '
        f'<a href="{e(ANCHORS.call(int(f.get("call") or 0)))}">call {e(f.get("call"))}</a>: '
        f"{e(f['message'])}</p>" + _calls_table(pm.calls_around_error, pm) + "</section>"
    )


def _error_results(pm: PostMortem) -> str:
    return _run_list("Error tool results", pm.error_results) + _run_list(
        "Inferred error tool results (not flagged by the format)", pm.inferred_error_results
    )


def _run_list(title: str, runs: list[dict[str, Any]]) -> str:
    if not runs:
        return ""
    items = "".join(
        f'<li><span class="tag">{e(run.get("name") or "?")}</span> <code>{e(run["id"])}</code>'
        + (
            f' <span class="muted small">{e(run["error_inferred"])}</span>'
            if run.get("error_inferred")
            else ""
        )
        + f' <div class="preview">{e((run.get("result_preview") or "")[:300])}</div></li>'
        for run in runs
    )
    return f'<section class="panel"><h2>{e(title)}</h2><ul class="run-list">{items}</ul></section>'


def _calls_section(title: str, calls: list[dict[str, Any]], pm: PostMortem) -> str:
    return f'<section class="panel"><h2>{e(title)}</h2>{_calls_table(calls, pm)}</section>'


def _calls_table(calls: list[dict[str, Any]], pm: PostMortem, anchors: bool = False) -> str:
    rows = []
    for call in calls:
        total = sum((call.get("buckets") or {}).values())
        approx = "" if call.get("tokens_exact", True) else "≈ "
        state = (
            f'<span class="badge badge-error">{e((call.get("error") or "")[:100])}</span>'
            if call.get("status") == "error"
            else f'<span class="stop">{e(call.get("stop_reason") or "—")}</span>'
        )
        findings = "".join(
            f'<span class="badge badge-{e(f["severity"])}" title="{e(f["message"])}">'
            f"{e(f['rule'])}</span> "
            for f in pm.findings_for_call.get(call["index"], [])
        )
        row_id = f' id="{e(_anchor(call["index"]))}"' if anchors else ""
        rows.append(
            f'<tr{row_id}><td class="num">'
            f'<a href="{e(ANCHORS.call(call["index"]))}">#{call["index"]}</a></td>'
            f'<td class="model">{e(call.get("model") or "—")}</td>'
            f'<td class="num">{approx}{count(total)}</td>'
            f'<td class="num">{count(call.get("output_tokens"))}</td>'
            f'<td>{state}</td><td class="flags">{findings}</td></tr>'
        )
    return (
        '<div class="table-wrap"><table class="data"><thead><tr><th class="num">Call</th>'
        '<th>Model</th><th class="num">Input</th><th class="num">Output</th>'
        "<th>Stop / error</th><th>Findings</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _findings(pm: PostMortem) -> str:
    if not pm.findings_by_rule:
        return '<section class="panel"><h2>Findings</h2><p class="ok-text">None.</p></section>'
    groups = []
    for rule, found in pm.findings_by_rule:
        items = "".join(
            f'<li class="finding sev-{e(f["severity"])}">'
            + (
                f'<a href="{e(ANCHORS.call(f["call"]))}">call {e(f["call"])}</a> '
                if f.get("call")
                else ""
            )
            + f'<span class="finding-message">{e(f["message"])}</span></li>'
            for f in found
        )
        groups.append(
            f'<details class="rule-group" open><summary><span class="badge badge-'
            f'{e(found[0]["severity"])}">{e(found[0]["severity"])}</span> <code>{e(rule)}</code> '
            f'<span class="muted small">{len(found)}</span></summary><ul class="findings">{items}'
            "</ul></details>"
        )
    return f'<section class="panel"><h2>Findings, by rule</h2>{"".join(groups)}</section>'


def _all_calls(report: dict[str, Any], pm: PostMortem) -> str:
    calls = report.get("calls", [])
    return (
        '<section class="panel"><h2>Every call</h2>'
        + _calls_table(calls, pm, anchors=True)
        + "</section>"
    )
