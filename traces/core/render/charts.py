"""Plotly figures of a stored report, as plain JSON-serialisable dicts.

Each builder takes the report dict (`build_report`'s output) and a `theme` ("light" or
"dark": transparent backgrounds, font and grid colours that read on both) and returns
`{"data": [...], "layout": {...}}` for `Plotly.newPlot`, or None when the trace holds
nothing to draw:

- `transcript_growth_figure`: each call's input stacked by bucket (prefix, replayed
  output, tool results, other), cache reads and writes as lines, output tokens on a
  second axis; hatched bars and "≈ estimate" in the hover where the split is estimated;
- `cost_figure`: cumulative cost, actual vs uncached vs stable prefix cached (a figure
  without data whose title says so when no price is known);
- `timeline_figure`: model time vs your code's time over wall-clock seconds, tool runs in
  parallel overlapping (None without timings);
- `resend_results_figure` / `resend_by_tool_figure`: the tool results re-sent the most
  tokens (top 20) and the same per tool name (None without tool results).

Plotly renders hover text, text and tick labels as pseudo-HTML, so every untrusted
string (tool names, ids, model names) is HTML-escaped before it goes in a figure.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from .sequence_svg import call_input_tokens

Theme = Literal["light", "dark"]
Figure = dict[str, Any]

BUCKETS = (
    ("prefix", "prefix (system, tools, first message)"),
    ("replayed_output", "replayed output"),
    ("tool_results", "tool results"),
    ("other", "other"),
)
COLOURS = {
    "prefix": "#6366f1",
    "replayed_output": "#14b8a6",
    "tool_results": "#f59e0b",
    "other": "#94a3b8",
    "cache_read": "#22c55e",
    "cache_write": "#ec4899",
    "output": "#0ea5e9",
    "actual": "#6366f1",
    "uncached": "#ef4444",
    "prefix_cached": "#14b8a6",
    "model": "#6366f1",
    "code": "#94a3b8",
    "tool": "#f59e0b",
}
THEMES: dict[str, dict[str, str]] = {
    "light": {
        "font": "#1b1d24",
        "muted": "#646b7a",
        "grid": "rgba(100, 107, 122, 0.18)",
        "line": "rgba(100, 107, 122, 0.45)",
        "hover_bg": "#ffffff",
        "hover_border": "#e2e4ea",
    },
    "dark": {
        "font": "#e7e9ee",
        "muted": "#9aa1b0",
        "grid": "rgba(154, 161, 176, 0.18)",
        "line": "rgba(154, 161, 176, 0.45)",
        "hover_bg": "#1f232c",
        "hover_border": "#2c313c",
    },
}
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
COMPACTION_COLOUR = "#b45309"
"""Compaction marks: the warning amber, readable on the light and the dark theme."""
MANY_CALLS = 100
"""Above this many calls bars touch (bargap 0) and markers and per-bar text are dropped."""
TOP_RESULTS = 20
ESTIMATE_NOTE = " (≈ estimate)"


def escape(value: Any, limit: int = 80) -> str:
    """Untrusted text made safe for Plotly's pseudo-HTML labels, and kept short."""
    text = " ".join(str(value).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return html.escape(text, quote=False)


# -- shared layout ---------------------------------------------------------------------


def _axis(colours: Mapping[str, str], title: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": title},
        "gridcolor": colours["grid"],
        "linecolor": colours["line"],
        "zerolinecolor": colours["line"],
        "tickfont": {"color": colours["muted"]},
        "automargin": True,
        **extra,
    }


def _layout(theme: Theme, title: str, **extra: Any) -> dict[str, Any]:
    colours = THEMES.get(theme, THEMES["light"])
    return {
        "title": {"text": title, "x": 0, "xanchor": "left", "font": {"size": 15}},
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
        "font": {"family": FONT, "size": 12, "color": colours["font"]},
        "margin": {"l": 64, "r": 24, "t": 56, "b": 48},
        "legend": {
            "orientation": "h",
            "y": -0.18,
            "x": 0,
            "traceorder": "normal",
            "font": {"color": colours["font"]},
        },
        "hoverlabel": {
            "bgcolor": colours["hover_bg"],
            "bordercolor": colours["hover_border"],
            "font": {"family": FONT, "color": colours["font"]},
        },
        "hovermode": "closest",
        **extra,
    }


def _colours(theme: Theme) -> dict[str, str]:
    return THEMES.get(theme, THEMES["light"])


def _calls(report: Mapping[str, Any], loop: int | None) -> list[Mapping[str, Any]]:
    calls = report.get("calls") or []
    if loop is None:
        return list(calls)
    return [c for c in calls if c.get("loop") == loop]


def _runs(report: Mapping[str, Any], loop: int | None) -> list[Mapping[str, Any]]:
    runs = report.get("tool_runs") or []
    if loop is None:
        return list(runs)
    return [r for r in runs if r.get("loop") == loop]


def _loop_title(loop: int | None) -> str:
    return f" · loop {loop}" if loop is not None else ""


# -- 1. transcript growth --------------------------------------------------------------


def transcript_growth_figure(
    report: Mapping[str, Any], *, theme: Theme = "light", loop: int | None = None
) -> Figure | None:
    """Input per call stacked by bucket; cache reads/writes and output as their own series."""
    calls = _calls(report, loop)
    if not calls:
        return None
    many = len(calls) > MANY_CALLS
    xs = [c["index"] for c in calls]
    estimated = [not c.get("tokens_exact", True) for c in calls]
    customdata = []
    for call, guess in zip(calls, estimated, strict=True):
        total, exact = call_input_tokens(call)
        note = ESTIMATE_NOTE if guess or not exact else ""
        customdata.append([total, note, escape(call.get("model") or "unknown model", 60)])
    data: list[dict[str, Any]] = []
    for key, label in BUCKETS:
        data.append(
            {
                "type": "bar",
                "name": label,
                "x": xs,
                "y": [int((c.get("buckets") or {}).get(key) or 0) for c in calls],
                "customdata": customdata,
                "marker": {
                    "color": COLOURS[key],
                    "line": {"width": 0},
                    "pattern": {
                        "shape": ["/" if guess else "" for guess in estimated],
                        "solidity": 0.35,
                    },
                },
                "hovertemplate": (
                    f"call %{{x}} · %{{customdata[2]}}<br>{label}: %{{y:,}} tokens"
                    "%{customdata[1]}<br>input in all: %{customdata[0]:,} tokens<extra></extra>"
                ),
            }
        )
    mode = "lines" if many else "lines+markers"
    for key, field, label in (
        ("cache_read", "cache_read_tokens", "cache reads"),
        ("cache_write", "cache_write_tokens", "cache writes"),
    ):
        values = [c.get(field) for c in calls]
        if not any(values):
            continue
        data.append(_line(xs, values, label, COLOURS[key], mode, "y", dash="dot"))
    outputs = [c.get("output_tokens") for c in calls]
    data.append(_line(xs, outputs, "output tokens (right axis)", COLOURS["output"], mode, "y2"))
    colours = _colours(theme)
    guessed = sum(estimated)
    legend_note = f"hatched: ≈ estimated split ({guessed} calls)" if guessed else ""
    layout = _layout(
        theme,
        f"Transcript growth: input tokens per call{_loop_title(loop)}",
        barmode="stack",
        bargap=0 if many else 0.15,
        xaxis=_axis(colours, "call", type="linear" if many else "category"),
        yaxis=_axis(colours, "input tokens", tickformat=",", rangemode="tozero"),
        yaxis2=_axis(
            colours,
            "output tokens",
            overlaying="y",
            side="right",
            showgrid=False,
            tickmode="auto",
            tickformat=",.0f",
            rangemode="tozero",
        ),
    )
    if legend_note:
        layout["legend"]["title"] = {"text": legend_note}
    _mark_compactions(layout, calls, many)
    return {"data": data, "layout": layout}


def _mark_compactions(layout: dict[str, Any], calls: list[Mapping[str, Any]], linear: bool) -> None:
    """A dashed line and a note just before every call whose history was compacted: the
    drop in input that follows is the compaction, not a change of workload.

    On a category axis (few calls) positions count bars from 0, on a linear one they are
    call numbers; either way the line sits half a bar before the compacted call.
    """
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for position, call in enumerate(calls):
        compaction = call.get("compaction")
        if not compaction:
            continue
        x = (call["index"] if linear else position) - 0.5
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": x,
                "x1": x,
                "y0": 0,
                "y1": 1,
                "line": {"color": COMPACTION_COLOUR, "width": 1.5, "dash": "dash"},
            }
        )
        before = compaction.get("pre_tokens")
        hover = f"history compacted before call {call['index']}"
        if before:
            hover += f" (was {int(before):,} tokens)"
        notes.append(
            {
                "x": x,
                "xref": "x",
                "y": 1,
                "yref": "paper",
                "yanchor": "bottom",
                "text": "compacted",
                "hovertext": escape(hover, 120),
                "showarrow": False,
                "font": {"size": 11, "color": COMPACTION_COLOUR},
            }
        )
    if shapes:
        layout["shapes"] = shapes
        layout["annotations"] = notes


def _line(
    xs: Sequence[Any],
    values: Sequence[Any],
    label: str,
    colour: str,
    mode: str,
    axis: str,
    dash: str = "solid",
) -> dict[str, Any]:
    return {
        "type": "scatter",
        "mode": mode,
        "name": label,
        "x": list(xs),
        "y": list(values),
        "yaxis": axis,
        "line": {"color": colour, "width": 1.5, "dash": dash},
        "marker": {"size": 5},
        "hovertemplate": f"call %{{x}}<br>{label}: %{{y:,}} tokens<extra></extra>",
    }


# -- 2. cumulative cost ----------------------------------------------------------------


def cost_figure(
    report: Mapping[str, Any], *, theme: Theme = "light", loop: int | None = None
) -> Figure:
    """Cumulative dollars: what was paid, with no caching, and with the prefix cached."""
    calls = _calls(report, loop)
    colours = _colours(theme)
    known = [c for c in calls if c.get("cost_usd") is not None]
    if not known:
        unpriced = (report.get("accounting") or {}).get("unpriced_models") or []
        models = ", ".join(escape(m, 40) for m in unpriced[:3])
        why = f" ({models})" if models else ""
        title = f"Cumulative cost: no prices known for these models{why}"
        return {"data": [], "layout": _layout(theme, title)}
    xs = [c["index"] for c in calls]
    many = len(calls) > MANY_CALLS
    data = []
    # "actual" last, so it is drawn on top where the curves coincide.
    for key, field, label in (
        ("uncached", "cost_uncached_usd", "with no caching"),
        ("prefix_cached", "cost_prefix_cached_usd", "with the stable prefix cached"),
        ("actual", "cost_usd", "actual"),
    ):
        running, values = 0.0, []
        for call in calls:
            running += call.get(field) or 0.0
            values.append(round(running, 6))
        data.append(
            {
                "type": "scatter",
                "mode": "lines" if many else "lines+markers",
                "name": label,
                "x": xs,
                "y": values,
                "line": {
                    "color": COLOURS[key],
                    "width": 2.5 if key == "actual" else 1.5,
                    "dash": "solid" if key == "actual" else "dash",
                },
                "marker": {"size": 5},
                "hovertemplate": f"after call %{{x}}<br>{label}: $%{{y:,.4f}}<extra></extra>",
            }
        )
    missing = len(calls) - len(known)
    note = f" ({missing} calls unpriced)" if missing else ""
    layout = _layout(
        theme,
        f"Cumulative cost{_loop_title(loop)}{note}",
        xaxis=_axis(colours, "call", type="linear" if many else "category"),
        yaxis=_axis(colours, "US dollars", tickprefix="$", tickformat=",", rangemode="tozero"),
    )
    return {"data": data, "layout": layout}


# -- 3. timeline -----------------------------------------------------------------------


def timeline_figure(
    report: Mapping[str, Any], *, theme: Theme = "light", loop: int | None = None
) -> Figure | None:
    """Model time vs your code's time on a wall clock; None when no call has timings.

    Your code's time is the gap between a call's response and the next request of its
    loop. Tool runs with a measured duration are drawn from `started_at` when the report
    has it, else from the end of the call that asked for them; runs of one parallel
    batch get their own rows so they overlap visibly.
    """
    calls = [
        c
        for c in _calls(report, loop)
        if c.get("started_at") is not None and c.get("duration_s") is not None
    ]
    if not calls:
        return None
    origin = min(c["started_at"] for c in calls)
    by_index = {c["index"]: c for c in calls}
    data = [_model_bars(calls, origin), _code_bars(calls, origin)]
    tools, slots = _tool_bars(_runs(report, loop), by_index, origin)
    if tools is not None:
        data.append(tools)
    data = [trace for trace in data if trace["x"]]
    rows = ["model", "your code", *[_slot_name(n) for n in range(slots)]]
    colours = _colours(theme)
    layout = _layout(
        theme,
        f"Timeline: model time vs your code's time{_loop_title(loop)}",
        barmode="overlay",
        bargap=0.25,
        xaxis=_axis(colours, "seconds from the first call", rangemode="tozero"),
        yaxis=_axis(
            colours,
            "",
            type="category",
            categoryorder="array",
            categoryarray=rows,
            autorange="reversed",
        ),
        height=max(260, 120 + 44 * len(rows)),
    )
    return {"data": data, "layout": layout}


def _bars(
    name: str,
    colour: str,
    rows: list[str],
    bases: list[float],
    lengths: list[float],
    customdata: list[list[Any]],
    hovertemplate: str,
) -> dict[str, Any]:
    return {
        "type": "bar",
        "orientation": "h",
        "name": name,
        "y": rows,
        "base": bases,
        "x": lengths,
        "customdata": customdata,
        "marker": {"color": colour, "opacity": 0.8, "line": {"width": 0}},
        "hovertemplate": hovertemplate,
    }


def _model_bars(calls: list[Mapping[str, Any]], origin: float) -> dict[str, Any]:
    return _bars(
        "model (billed)",
        COLOURS["model"],
        ["model"] * len(calls),
        [round(c["started_at"] - origin, 3) for c in calls],
        [round(c["duration_s"], 3) for c in calls],
        [[c["index"], c.get("output_tokens")] for c in calls],
        "call %{customdata[0]}<br>from %{base:.1f} s for %{x:.2f} s"
        "<br>output: %{customdata[1]:,} tokens<extra>model</extra>",
    )


def _code_bars(calls: list[Mapping[str, Any]], origin: float) -> dict[str, Any]:
    """The gaps between a response and its loop's next request: your code running."""
    bases, lengths, customdata = [], [], []
    previous: dict[Any, Mapping[str, Any]] = {}
    for call in sorted(calls, key=lambda c: c["started_at"]):
        before = previous.get(call.get("loop"))
        previous[call.get("loop")] = call
        if before is None:
            continue
        ended = before["started_at"] + before["duration_s"]
        gap = call["started_at"] - ended
        if gap <= 0:
            continue
        bases.append(round(ended - origin, 3))
        lengths.append(round(gap, 3))
        customdata.append([before["index"], call["index"]])
    return _bars(
        "your code (not billed)",
        COLOURS["code"],
        ["your code"] * len(bases),
        bases,
        lengths,
        customdata,
        "between call %{customdata[0]} and call %{customdata[1]}"
        "<br>from %{base:.1f} s for %{x:.2f} s<extra>your code</extra>",
    )


def _slot_name(position: int) -> str:
    return "tools" if position == 0 else f"tools ({position + 1})"


def _tool_bars(
    runs: list[Mapping[str, Any]], by_index: Mapping[int, Mapping[str, Any]], origin: float
) -> tuple[dict[str, Any] | None, int]:
    rows, bases, lengths, customdata = [], [], [], []
    slot_in_batch: dict[Any, int] = {}
    slots = 0
    for run in runs:
        duration = run.get("duration_s")
        asked = by_index.get(run.get("call"))
        started = run.get("started_at")
        if started is None and asked is not None:
            started = asked["started_at"] + asked["duration_s"]
        if duration is None or started is None:
            continue
        slot = slot_in_batch.get(run.get("call"), 0)
        slot_in_batch[run.get("call")] = slot + 1
        slots = max(slots, slot + 1)
        rows.append(_slot_name(slot))
        bases.append(round(started - origin, 3))
        lengths.append(round(duration, 3))
        customdata.append(
            [escape(run.get("name") or "?", 60), escape(run.get("id") or "", 60), run.get("call")]
        )
    if not rows:
        return None, 0
    trace = _bars(
        "tool runs (your code)",
        COLOURS["tool"],
        rows,
        bases,
        lengths,
        customdata,
        "%{customdata[0]} · %{customdata[1]}<br>asked in call %{customdata[2]}"
        "<br>from %{base:.1f} s for %{x:.2f} s<extra>tool</extra>",
    )
    return trace, slots


# -- 4. heaviest tool results ----------------------------------------------------------


def _resent(report: Mapping[str, Any], loop: int | None) -> list[Mapping[str, Any]]:
    return [
        run
        for run in _runs(report, loop)
        if run.get("result_tokens") is not None and (run.get("resend_tokens") or 0) > 0
    ]


def resend_results_figure(
    report: Mapping[str, Any],
    *,
    theme: Theme = "light",
    loop: int | None = None,
    top: int = TOP_RESULTS,
) -> Figure | None:
    """The tool results that cost the most re-sent input: tokens x requests carrying."""
    runs = sorted(_resent(report, loop), key=lambda r: -(r.get("resend_tokens") or 0))[:top]
    if not runs:
        return None
    labels = [
        f"{rank}. {escape(run.get('name') or '?', 32)} (call {run.get('call') or '?'})"
        for rank, run in enumerate(runs, start=1)
    ]
    customdata = [
        [
            run.get("result_tokens"),
            run.get("requests_carrying") or 0,
            escape(run.get("id") or "", 60),
            "" if run.get("result_tokens_exact", True) else ESTIMATE_NOTE,
        ]
        for run in runs
    ]
    trace = {
        "type": "bar",
        "orientation": "h",
        "name": "re-sent tokens",
        "y": labels,
        "x": [run.get("resend_tokens") or 0 for run in runs],
        "customdata": customdata,
        "marker": {"color": COLOURS["tool_results"]},
        "hovertemplate": (
            "%{y}<br>id %{customdata[2]}<br>%{customdata[0]:,} tokens \u00d7 %{customdata[1]} "
            "requests = %{x:,} tokens re-sent%{customdata[3]}<extra></extra>"
        ),
    }
    if len(runs) <= MANY_CALLS:
        trace["text"] = [f"{value:,}" for value in trace["x"]]
        trace["textposition"] = "auto"
    colours = _colours(theme)
    layout = _layout(
        theme,
        f"Heaviest tool results: top {len(runs)} by tokens re-sent",
        showlegend=False,
        xaxis=_axis(colours, "tokens re-sent as input", tickformat=","),
        yaxis=_axis(colours, "", type="category", autorange="reversed"),
        height=max(240, 90 + 24 * len(runs)),
        margin={"l": 200, "r": 24, "t": 56, "b": 48},
    )
    return {"data": [trace], "layout": layout}


def resend_by_tool_figure(
    report: Mapping[str, Any],
    *,
    theme: Theme = "light",
    loop: int | None = None,
    top: int = TOP_RESULTS,
) -> Figure | None:
    """Tokens re-sent per tool name, summed over its results."""
    totals: dict[str, list[int]] = {}
    for run in _resent(report, loop):
        entry = totals.setdefault(run.get("name") or "?", [0, 0, 0])
        entry[0] += run.get("resend_tokens") or 0
        entry[1] += 1
        entry[2] += run.get("result_tokens") or 0
    if not totals:
        return None
    ranked = sorted(totals.items(), key=lambda item: -item[1][0])[:top]
    labels = [escape(name, 40) for name, _ in ranked]
    if len(set(labels)) != len(labels):  # names that differ only past the cut
        labels = [f"{rank}. {label}" for rank, label in enumerate(labels, start=1)]
    trace = {
        "type": "bar",
        "orientation": "h",
        "name": "re-sent tokens per tool",
        "y": labels,
        "x": [entry[0] for _, entry in ranked],
        "customdata": [[entry[1], entry[2]] for _, entry in ranked],
        "text": [f"{entry[0]:,}" for _, entry in ranked],
        "textposition": "auto",
        "marker": {"color": COLOURS["tool"]},
        "hovertemplate": (
            "%{y}<br>%{customdata[0]} results, %{customdata[1]:,} tokens"
            "<br>%{x:,} tokens re-sent<extra></extra>"
        ),
    }
    colours = _colours(theme)
    layout = _layout(
        theme,
        "Tokens re-sent per tool",
        showlegend=False,
        xaxis=_axis(colours, "tokens re-sent as input", tickformat=","),
        yaxis=_axis(colours, "", type="category", autorange="reversed"),
        height=max(200, 90 + 28 * len(ranked)),
        margin={"l": 160, "r": 24, "t": 56, "b": 48},
    )
    return {"data": [trace], "layout": layout}


def figures(
    report: Mapping[str, Any], *, theme: Theme = "light", loop: int | None = None
) -> dict[str, Figure | None]:
    """Every figure of a report page, keyed by name (None where there is nothing to draw)."""
    return {
        "growth": transcript_growth_figure(report, theme=theme, loop=loop),
        "cost": cost_figure(report, theme=theme, loop=loop),
        "timeline": timeline_figure(report, theme=theme, loop=loop),
        "resend_results": resend_results_figure(report, theme=theme, loop=loop),
        "resend_by_tool": resend_by_tool_figure(report, theme=theme, loop=loop),
    }
