"""Usage over time: the hourly sums of the usage rows folded into days, weeks or months of
a time zone, with the totals by model, agent and project, the dollars by kind of token
and by bucket, and the findings' and what-if levers' dollars.

The database adds the rows up per (UTC hour, model, agent, project)
(traces.selectors.usage); this folds those sums, so the time zone is chosen when
reading, not when storing. An hour goes to the local day its start falls in: in a zone
whose offset is not a whole number of hours (India, +05:30) the calls of the half hour
around midnight land on the neighbouring day. Weeks start on Monday. Without a time zone
the machine's own is used (as ccusage does).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .usage_rows import BUCKETS, HOUR, KINDS

PERIODS = ("daily", "weekly", "monthly")
TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
SUMS = ("calls", "priced_calls", *TOKENS, "cost_usd",
        *(f"{kind}_usd" for kind in KINDS), *(f"{name}_usd" for name in BUCKETS))  # fmt: skip
"""The numbers each hourly sum carries (the UsageSlot columns)."""


class UsageError(ValueError):
    """A period, date or time zone that cannot be read; the message says which."""


@dataclass(frozen=True, slots=True)
class Window:
    """The selected range as UTC epoch seconds, [start, end); None: open."""

    start: int | None
    end: int | None


def zone(name: str | None) -> dt.tzinfo | None:
    """The named IANA zone; None (the machine's local time) for no name or "local"."""
    if not name or name == "local":
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise UsageError(f"unknown time zone {name!r} (an IANA name, e.g. Europe/Paris)") from exc


def parse_date(text: str, what: str) -> dt.date:
    """YYYYMMDD (as ccusage) or YYYY-MM-DD."""
    raw = text.strip()
    for pattern in ("%Y%m%d", "%Y-%m-%d"):
        try:
            return dt.datetime.strptime(raw, pattern).date()
        except ValueError:
            continue
    raise UsageError(f"{what}: {text!r} is not a date (YYYYMMDD or YYYY-MM-DD)")


def window(since: dt.date | None, until: dt.date | None, tz: dt.tzinfo | None) -> Window:
    """The UTC range of whole local days since..until (both included)."""

    def midnight(day: dt.date) -> int:
        local = dt.datetime.combine(day, dt.time(), tzinfo=tz)
        return int((local if tz else local.astimezone()).timestamp())

    if since and until and until < since:
        raise UsageError(f"--until {until} is before --since {since}")
    start = midnight(since) // HOUR * HOUR if since else None
    end = midnight(until + dt.timedelta(days=1)) if until else None
    return Window(start, end)


def period_key(hour: int, period: str, tz: dt.tzinfo | None) -> str:
    local = dt.datetime.fromtimestamp(hour, tz) if tz else dt.datetime.fromtimestamp(hour)
    day = local.date()
    if period == "daily":
        return day.isoformat()
    if period == "weekly":
        return (day - dt.timedelta(days=day.weekday())).isoformat()
    if period == "monthly":
        return day.strftime("%Y-%m")
    raise UsageError(f"unknown period {period!r} (one of {', '.join(PERIODS)})")


def _empty() -> dict[str, Any]:
    return dict.fromkeys(SUMS, 0) | {"cost_usd": 0.0}


def _add(into: dict[str, Any], row: Mapping[str, Any]) -> None:
    for name in SUMS:
        into[name] += row.get(name) or 0


def _finish(sums: dict[str, Any]) -> dict[str, Any]:
    out = {name: sums[name] for name in ("calls", *TOKENS)}
    out["total_tokens"] = sum(sums[name] for name in TOKENS)
    out["cost_usd"] = round(sums["cost_usd"], 6) if sums["priced_calls"] else None
    out["unpriced_calls"] = sums["calls"] - sums["priced_calls"]
    return out


def _split(sums: Mapping[str, Any]) -> dict[str, dict[str, float | None]]:
    """The dollars by kind of token and by bucket (None for each when nothing was priced)."""
    priced = sums["priced_calls"] > 0
    return {
        "by_kind": {k: round(sums[f"{k}_usd"], 6) if priced else None for k in KINDS},
        "by_bucket": {b: round(sums[f"{b}_usd"], 6) if priced else None for b in BUCKETS},
    }


def _ranked(groups: Mapping[str, dict[str, Any]], key: str) -> list[dict[str, Any]]:
    rows = [{key: name, **_finish(sums)} for name, sums in groups.items()]
    return sorted(rows, key=lambda r: (-(r["cost_usd"] or 0.0), -r["total_tokens"], r[key]))


def fold(
    hourly: Iterable[Mapping[str, Any]],
    *,
    period: str,
    tz: dt.tzinfo | None,
    breakdown: bool = False,
    findings: Sequence[Mapping[str, Any]] = (),
    savings: Sequence[Mapping[str, Any]] = (),
    sessions: int = 0,
) -> dict[str, Any]:
    """The usage summary: `hourly` rows carry `hour`, `model`, `agent`, `project` and the
    SUMS; `findings` (rule, count, sessions, cost_usd) and `savings` (lever, scenario,
    sessions, usd_saved, tokens_saved) are already summed over the window."""
    if period not in PERIODS:
        raise UsageError(f"unknown period {period!r} (one of {', '.join(PERIODS)})")
    periods: dict[str, dict[str, Any]] = {}
    period_models: dict[str, dict[str, dict[str, Any]]] = {}
    total = _empty()
    groups: dict[str, dict[str, dict[str, Any]]] = {"model": {}, "agent": {}, "project": {}}
    for row in hourly:
        key = period_key(int(row["hour"]), period, tz)
        _add(periods.setdefault(key, _empty()), row)
        _add(period_models.setdefault(key, {}).setdefault(row["model"] or "", _empty()), row)
        _add(total, row)
        for name, by in groups.items():
            _add(by.setdefault(row[name] or "", _empty()), row)
    rows = []
    for key in sorted(periods):
        entry = {"period": key, **_finish(periods[key]), **_split(periods[key])}
        entry["models"] = sorted(m for m in period_models[key] if m)
        if breakdown:
            entry["breakdown"] = _ranked(period_models[key], "model")
        rows.append(entry)
    return {
        "period": period,
        "timezone": getattr(tz, "key", None) or "local",
        "periods": rows,
        "totals": {**_finish(total), "sessions": sessions},
        "by_model": _ranked(groups["model"], "model"),
        "by_agent": _ranked(groups["agent"], "agent"),
        "by_project": _ranked(groups["project"], "project"),
        **_split(total),
        "findings": sorted(
            ({**f, "cost_usd": round(f["cost_usd"] or 0.0, 6)} for f in findings),
            key=lambda f: (-f["cost_usd"], -f["count"], f["rule"]),
        ),
        "savings": sorted(
            (
                {**s, "usd_saved": None if s["usd_saved"] is None else round(s["usd_saved"], 6)}
                for s in savings
            ),
            key=lambda s: (-(s["usd_saved"] or 0.0), -(s["tokens_saved"] or 0), s["lever"]),
        ),
    }
