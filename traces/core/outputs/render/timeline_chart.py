"""The timeline figure: model time vs your code's time over wall-clock seconds, tool runs
in parallel overlapping (None without timings)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
        customdata.append(
            [escape(run.get("name") or "?", 60), escape(run.get("id") or "", 60), call]
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
