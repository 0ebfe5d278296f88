"""The trace list's search, filters, sort and page, read from and written to a query string.

Everything a filtered view needs lives in the URL (`/?rule=dangling-tool-call&outcome=
api_error&sort=-cost&page=2`), so a view can be bookmarked and shared. Reading is lenient:
a value that cannot be read is dropped and named in `problems` (the page says so) rather
than failing the request.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, get_args

from traces.core.records import dataclass, field, fields, replace

from ..report_types import Severity
from .runstats import OUTCOME_FILTERS

SORTS = {
    "date": "created_at",
    "cost": "cost_usd",
    "calls": "calls_count",
    "findings": "flags_count",
    "name": "name",
}
"""Sort keys of the query string and the summary column each orders by."""
DEFAULT_SORT = "-date"
GROUPS = {"agent": "agent", "project": "working_dir"}
"""`group` values and the Trace column rows are grouped by."""
SEVERITIES: tuple[str, ...] = get_args(Severity)
OUTCOME_CHOICES = (
    ("finished", "Finished"),
    ("halted", "Halted on tool_use"),
    ("api_error", "API error"),
    ("max_tokens", "Hit max_tokens"),
    ("interrupted", "Interrupted"),
    ("live", "Live (still recording)"),
    ("unknown", "Unknown"),
)
LABELS = {
    "q": "search",
    "format": "format",
    "outcome": "outcome",
    "rule": "rule",
    "severity": "severity",
    "model": "model",
    "agent": "agent",
    "project": "project",
    "group": "grouped by",
    "label": "label",
    "set": "run set",
    "from": "added from",
    "to": "added until",
    "cost_min": "cost ≥",
    "cost_max": "cost ≤",
    "calls_min": "calls ≥",
    "calls_max": "calls ≤",
    "errors": "has error results",
}


@dataclass(frozen=True)
class ListQuery:
    q: str = ""
    format: str = ""
    outcome: str = ""
    rule: str = ""
    severity: str = ""
    model: str = ""
    agent: str = ""
    project: str = ""
    """The agent's recorded working directory (Trace.working_dir)."""
    group: str = ""
    """"agent" or "project": rows grouped by it (ordered by it first), "" for none."""
    label: str = ""
    set: str = ""
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    cost_min: float | None = None
    cost_max: float | None = None
    calls_min: int | None = None
    calls_max: int | None = None
    errors: bool = False
    sort: str = DEFAULT_SORT
    page: int = 1
    problems: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> ListQuery:
        problems: list[str] = []

        def text(key: str, limit: int = 200) -> str:
            # NUL never reaches a query: PostgreSQL refuses it in any string (a 500 before,
            # issue 26), and stored text keeps its NULs escaped (traces.fields).
            return " ".join(str(params.get(key, "")).replace("\x00", " ").split())[:limit]

        def number(key: str, kind: type) -> Any:
            raw = text(key, 40)
            if not raw:
                return None
            try:
                value = kind(raw)
            except ValueError:
                problems.append(f"{LABELS[key]}: {raw!r} is not a number")
                return None
            if value < 0 or value != value:  # negative or NaN
                problems.append(f"{LABELS[key]}: {raw!r} must be zero or more")
                return None
            return value

        def date(key: str) -> dt.date | None:
            raw = text(key, 40)
            if not raw:
                return None
            try:
                return dt.date.fromisoformat(raw)
            except ValueError:
                problems.append(f"{LABELS[key]}: {raw!r} is not a date (YYYY-MM-DD)")
                return None

        outcome = text("outcome", 40)
        if outcome and outcome != "live" and outcome not in OUTCOME_FILTERS:
            problems.append(f"outcome: {outcome!r} is not an outcome")
            outcome = ""
        severity = text("severity", 10)
        if severity and severity not in SEVERITIES:
            problems.append(f"severity: {severity!r} is not error, warning or info")
            severity = ""
        group = text("group", 10)
        if group and group not in GROUPS:
            problems.append(f"grouped by: {group!r} is not agent or project")
            group = ""
        sort = text("sort", 20) or DEFAULT_SORT
        if sort.lstrip("-") not in SORTS:
            problems.append(f"sort: {sort!r} is not one of {', '.join(SORTS)}")
            sort = DEFAULT_SORT
        try:
            page = max(1, int(text("page", 12) or 1))
        except ValueError:
            page = 1
        return cls(
            q=text("q"),
            format=text("format", 60),
            outcome=outcome,
            rule=text("rule", 60),
            severity=severity,
            model=text("model"),
            agent=text("agent", 100),
            project=text("project", 500),
            group=group,
            label=text("label", 60),
            set=text("set", 60),
            date_from=date("from"),
            date_to=date("to"),
            cost_min=number("cost_min", float),
            cost_max=number("cost_max", float),
            calls_min=number("calls_min", int),
            calls_max=number("calls_max", int),
            errors=text("errors", 5) in ("1", "on", "true", "yes"),
            sort=sort,
            page=page,
            problems=tuple(problems),
        )

    @property
    def outcome_kind(self) -> str:
        """The stored outcome kind the `outcome` filter selects ("" for none or live)."""
        return OUTCOME_FILTERS.get(self.outcome, "")

    @property
    def sort_key(self) -> str:
        return self.sort.lstrip("-")

    @property
    def descending(self) -> bool:
        return self.sort.startswith("-")

    def params(self) -> dict[str, str]:
        """The query string's parameters (defaults left out), page included when not 1."""
        out: dict[str, str] = {}
        for name, key in (
            ("q", "q"),
            ("format", "format"),
            ("outcome", "outcome"),
            ("rule", "rule"),
            ("severity", "severity"),
            ("model", "model"),
            ("agent", "agent"),
            ("project", "project"),
            ("group", "group"),
            ("label", "label"),
            ("set", "set"),
        ):
            value = getattr(self, name)
            if value:
                out[key] = value
        if self.date_from:
            out["from"] = self.date_from.isoformat()
        if self.date_to:
            out["to"] = self.date_to.isoformat()
        for name in ("cost_min", "cost_max", "calls_min", "calls_max"):
            value = getattr(self, name)
            if value is not None:
                out[name] = f"{value:g}" if isinstance(value, float) else str(value)
        if self.errors:
            out["errors"] = "1"
        if self.sort != DEFAULT_SORT:
            out["sort"] = self.sort
        if self.page != 1:
            out["page"] = str(self.page)
        return out

    def with_changes(self, **changes: Any) -> ListQuery:
        """A copy with some values changed; any change but the page goes back to page 1."""
        if "page" not in changes:
            changes["page"] = 1
        return replace(self, **changes)

    def sorted_by(self, key: str) -> ListQuery:
        """The query sorted by `key`: descending first, ascending when it already is."""
        if self.sort == f"-{key}":
            return self.with_changes(sort=key)
        return self.with_changes(sort=f"-{key}")

    def active_filters(self) -> list[tuple[str, str, str]]:
        """(parameter, label, value) of each filter in use, for the chips above the list."""
        return [
            (key, LABELS[key], value)
            for key, value in self.params().items()
            if key not in ("sort", "page")
        ]

    @property
    def filtered(self) -> bool:
        return bool(self.active_filters())


FIELD_NAMES = tuple(f.name for f in fields(ListQuery))
