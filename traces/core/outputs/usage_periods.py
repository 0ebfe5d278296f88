"""Usage over time: the hourly sums of the usage rows folded into days, weeks or months of
a time zone, with the totals by model, agent and project, the dollars by kind of token
and by bucket, and the findings' and what-if levers' dollars.

Rows are stored per UTC hour; the database adds them up per (local day, model), the day
computed from the hour and the zone's offsets over the window (`offset_segments`), and
per (agent, project) (traces.selectors.usage); this folds those sums into periods, so the
time zone is chosen when reading, not when storing. An hour goes to the local day its
start falls in: in a zone whose offset is not a whole number of hours (India, +05:30)
the calls of the half hour around midnight land on the neighbouring day. Weeks start on
Monday. Without a time zone the machine's own is used (as ccusage does).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from traces.core.records import dataclass

from .usage_rows import BUCKETS, HOUR, KINDS

PERIODS = ("daily", "weekly", "monthly")
TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
SUMS = ("calls", "priced_calls", *TOKENS, "cost_usd",
        *(f"{kind}_usd" for kind in KINDS), *(f"{name}_usd" for name in BUCKETS))  # fmt: skip
"""The numbers each hourly sum carries (the UsageSlot columns)."""
PLACE_SUMS = ("calls", "priced_calls", *TOKENS, "cost_usd")
"""The numbers summed per agent and project: the totals, not their split."""


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


DAY = 86_400
EPOCH = dt.date(1970, 1, 1)


def offset_at(at: int, tz: dt.tzinfo | None) -> int:
    """The zone's UTC offset at `at` (epoch seconds), in seconds."""
    local = dt.datetime.fromtimestamp(at, tz) if tz else dt.datetime.fromtimestamp(at).astimezone()
    offset = local.utcoffset()
    return int(offset.total_seconds()) if offset else 0


def offset_segments(first: int, last: int, tz: dt.tzinfo | None) -> list[tuple[int | None, int]]:
    """The zone's offsets over the hours first..last: (until, offset) pieces, in order, the
    last one's `until` None. The database turns an hour into its local day with these
    (`(hour + offset) / 86400`), so it returns one sum per day, not per hour."""
    segments: list[tuple[int | None, int]] = []
    current = offset_at(first, tz)
    day = first
    while day < last:
        step = min(day + DAY, last)
        if offset_at(step, tz) != current:
            low, high = day, step  # the change is in (low, high]: find its hour
            while high - low > HOUR:
                middle = (low + high) // 2 // HOUR * HOUR
                if middle <= low:
                    break
                low, high = (middle, high) if offset_at(middle, tz) == current else (low, middle)
            segments.append((high, current))
            current = offset_at(high, tz)
        day = step
    segments.append((None, current))
    return segments


def local_day(day_number: int) -> dt.date:
    return EPOCH + dt.timedelta(days=int(day_number))


def period_key(hour: int, period: str, tz: dt.tzinfo | None) -> str:
    """The period of the local day the hour `hour` starts in."""
    return day_period(local_day((hour + offset_at(hour, tz)) // DAY), period)


def day_period(day: dt.date, period: str) -> str:
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
        value = row.get(name)
        if value:
            into[name] += value


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
    daily: Iterable[Mapping[str, Any]],
    *,
    period: str,
    tz: dt.tzinfo | None,
    breakdown: bool = False,
    places: Iterable[Mapping[str, Any]] = (),
    findings: Sequence[Mapping[str, Any]] = (),
    savings: Sequence[Mapping[str, Any]] = (),
    sessions: int = 0,
) -> dict[str, Any]:
    """The usage summary. `daily` rows carry `day` (the local day's number since
    1970-01-01, see `offset_segments`), `model` and the SUMS; `places`
    rows carry `agent`, `project` and PLACE_SUMS over the window; `findings` (rule,
    count, sessions, cost_usd) and `savings` (lever, scenario, sessions, usd_saved,
    tokens_saved) are already summed over the window."""
    if period not in PERIODS:
        raise UsageError(f"unknown period {period!r} (one of {', '.join(PERIODS)})")
    keys: dict[int, str] = {}
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for row in daily:
        day = int(row["day"])
        key = keys.get(day)
        if key is None:
            key = keys[day] = day_period(local_day(day), period)
        _add(cells.setdefault((key, row["model"] or ""), _empty()), row)
    periods: dict[str, dict[str, Any]] = {}
    period_models: dict[str, dict[str, dict[str, Any]]] = {}
    by_model: dict[str, dict[str, Any]] = {}
    total = _empty()
    for (key, model), sums in cells.items():
        _add(periods.setdefault(key, _empty()), sums)
        period_models.setdefault(key, {})[model] = sums
        _add(by_model.setdefault(model, _empty()), sums)
        _add(total, sums)
    by_place: dict[str, dict[str, dict[str, Any]]] = {"agent": {}, "project": {}}
    for row in places:
        for name, by in by_place.items():
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
        "by_model": _ranked(by_model, "model"),
        "by_agent": _ranked(by_place["agent"], "agent"),
        "by_project": _ranked(by_place["project"], "project"),
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
