"""The timeline figure: model time vs your code's time over wall-clock seconds, tool runs
in parallel overlapping (None without timings)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import downsample
from .chart_style import (
    COLOURS,
    Figure,
    Theme,
    _axis,
    _calls,
    _colours,
    _layout,
    _loop_title,
    _runs,
    escape,
)

CONDENSED_BARS = 500
"""Bars of a condensed row: each bar is an SVG path of its own, and a row of 20,000 calls
spans hours on some 900 px, so 500 (under 2 px each) draw what 2,000 would, 4 times
faster."""


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
        # Each row's length last: on a bar with a base, Plotly's %{x} is where it ends.
        "customdata": [[*row, length] for row, length in zip(customdata, lengths, strict=True)],
        "marker": {"color": colour, "opacity": 0.8, "line": {"width": 0}},
        "hovertemplate": hovertemplate,
    }


def _model_bars(calls: list[Mapping[str, Any]], origin: float) -> dict[str, Any]:
    bases = [round(c["started_at"] - origin, 3) for c in calls]
    lengths = [round(c["duration_s"], 3) for c in calls]
    if len(calls) > downsample.POINT_BUDGET:
        numbers = [c["index"] for c in calls]
        return _condensed("model (billed)", "model", "model", numbers, bases, lengths)
    return _bars(
        "model (billed)",
        COLOURS["model"],
        ["model"] * len(calls),
        bases,
        lengths,
        [[c["index"], _output(c)] for c in calls],
        "call %{customdata[0]}<br>from %{base:.1f} s for %{customdata[2]:.2f} s"
        "<br>output: %{customdata[1]}<extra>model</extra>",
    )


def _output(call: Mapping[str, Any]) -> str:
    """The hover's output figure: "not reported" rather than a blank when unknown."""
    tokens = call.get("output_tokens")
    return "not reported" if tokens is None else f"{int(tokens):,} tokens"


def _condensed(
    name: str,
    kind: str,
    row: str,
    numbers: list[int],
    bases: list[float],
    lengths: list[float],
) -> dict[str, Any]:
    """A row of more bars than the point budget as one bar per bucket of consecutive
    bars (`numbers`: each bar's call, for the hover), from the bucket's first start and
    as long as its bars' time added up: the row's total time is kept."""
    groups = downsample.buckets(numbers, budget=CONDENSED_BARS)
    customdata = []
    for group in groups:
        span = bases[group.end] + lengths[group.end] - bases[group.start]
        customdata.append([group.label, group.size, round(span, 1)])
    return _bars(
        name,
        COLOURS[kind],
        [row] * len(groups),
        [min(bases[g.start : g.end + 1]) for g in groups],
        [round(downsample.total(lengths[g.start : g.end + 1]) or 0.0, 3) for g in groups],
        customdata,
        "%{customdata[0]} (%{customdata[1]} bars)<br>from %{base:.1f} s:"
        f" %{{customdata[3]:.2f}} s in all over %{{customdata[2]}} s<extra>{row}</extra>",
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
    if len(bases) > downsample.POINT_BUDGET:
        numbers = [pair[0] for pair in customdata]
        return _condensed("your code (not billed)", "code", "your code", numbers, bases, lengths)
    return _bars(
        "your code (not billed)",
        COLOURS["code"],
        ["your code"] * len(bases),
        bases,
        lengths,
        customdata,
        "between call %{customdata[0]} and call %{customdata[1]}"
        "<br>from %{base:.1f} s for %{customdata[2]:.2f} s<extra>your code</extra>",
    )


def _slot_name(position: int) -> str:
    return "tools" if position == 0 else f"tools ({position + 1})"


def _tool_bars(
    runs: list[Mapping[str, Any]], by_index: Mapping[int, Mapping[str, Any]], origin: float
) -> tuple[dict[str, Any] | None, int]:
    rows, bases, lengths = [], [], []
    # (run, the call that asked for it) of each bar: a hover is escaped only when the
    # bars are drawn one by one (a long trace's are condensed, and had 40,000 escaped).
    drawn: list[tuple[Mapping[str, Any], Any]] = []
    slot_in_batch: dict[Any, int] = {}
    slots = 0
    for run in runs:
        duration = run.get("duration_s")
        call = run.get("call")
        asked = by_index.get(call) if isinstance(call, int) else None
        started = run.get("started_at")
        if started is None and asked is not None:
            started = asked["started_at"] + asked["duration_s"]
        if duration is None or started is None:
            continue
        slot = slot_in_batch.get(call, 0)
        slot_in_batch[call] = slot + 1
        slots = max(slots, slot + 1)
        rows.append(_slot_name(slot))
        bases.append(round(started - origin, 3))
        lengths.append(round(duration, 3))
        drawn.append((run, call))
    if not rows:
        return None, 0
    if len(rows) > downsample.POINT_BUDGET:
        order = sorted(range(len(rows)), key=lambda n: bases[n])
        asking = [drawn[n][1] for n in order]
        numbers = [number if isinstance(number, int) else 0 for number in asking]
        condensed = _condensed(
            "tool runs (your code)",
            "tool",
            _slot_name(0),
            numbers,
            [bases[n] for n in order],
            [lengths[n] for n in order],
        )
        return condensed, 1
    customdata = [
        [escape(run.get("name") or "?", 60), escape(run.get("id") or "", 60), call]
        for run, call in drawn
    ]
    trace = _bars(
        "tool runs (your code)",
        COLOURS["tool"],
        rows,
        bases,
        lengths,
        customdata,
        "%{customdata[0]} · %{customdata[1]}<br>asked in call %{customdata[2]}"
        "<br>from %{base:.1f} s for %{customdata[3]:.2f} s<extra>tool</extra>",
    )
    return trace, slots
