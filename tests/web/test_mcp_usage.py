"""The MCP `usage` tool (the usage page's and command's selector, days in UTC) against
totals computed here from the stored calls, through the SDK's in-memory client (in
addition to the stdio and HTTP tests of every tool)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.live.events import agent_lines, ndjson
from traces import models
from traces.mcp_server.server import build_server
from traces.services.upload import trace_upload

DAY = 86_400.0
JUNE_2 = dt.datetime(2025, 6, 2, 9, tzinfo=dt.UTC).timestamp()  # a Monday


@pytest.fixture
def traces(transactional_db):
    made = []
    for number, (start, calls) in enumerate(
        ((JUNE_2, 3), (JUNE_2 + 3600, 2), (JUNE_2 + 2 * DAY, 4), (JUNE_2 + 30 * DAY, 2))
    ):
        made.append(
            trace_upload(
                files=[(f"run{number}.jsonl", ndjson(agent_lines(calls, start=start)))],
                name=f"run {number}",
                project=models.Project.default(),
            ).trace
        )
    return made


def expected_by_day() -> dict[str, dict[str, int]]:
    """Per UTC day of each call: calls and tokens, from the Call rows."""
    days: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for call in models.Call.objects.all():
        day = dt.datetime.fromtimestamp(call.started_at, tz=dt.UTC).date().isoformat()
        days[day]["calls"] += 1
        days[day]["input_tokens"] += call.input_tokens
        days[day]["output_tokens"] += call.output_tokens
    return {day: dict(values) for day, values in days.items()}


def test_usage_per_day_week_and_month(traces):
    async def scenario():
        async with Client(build_server()) as client:
            results = {}
            for period in ("day", "week", "month"):
                results[period] = await client.call_tool("usage", {"period": period})
            results["june"] = await client.call_tool(
                "usage", {"since": "2025-06-01", "until": "2025-06-30"}
            )
            with pytest.raises(MCPError) as bad:
                await client.call_tool("usage", {"period": "year"})
            return results, bad.value

    results, bad = anyio.run(scenario)
    expected = expected_by_day()
    by_day = {row["period"]: row for row in results["day"].structured_content["periods"]}
    assert sorted(by_day) == sorted(expected) == ["2025-06-02", "2025-06-04", "2025-07-02"]
    for day, totals in expected.items():
        for key, value in totals.items():
            assert by_day[day][key] == value, (day, key)
    weeks = results["week"].structured_content["periods"]
    assert [(row["period"], row["calls"]) for row in weeks] == [
        ("2025-06-02", 9),
        ("2025-06-30", 2),
    ]
    months = results["month"].structured_content["periods"]
    assert [(row["period"], row["calls"]) for row in months] == [
        ("2025-06", 9),
        ("2025-07", 2),
    ]
    total_cost = sum(trace.cost_usd for trace in models.Trace.objects.all())
    assert sum(row["cost_usd"] for row in months) == pytest.approx(total_cost)
    june = results["june"].structured_content["periods"]
    assert [row["period"] for row in june] == ["2025-06-02", "2025-06-04"]
    text = results["day"].content[0].text
    assert "2025-06-02" in text and "2025-07-02" in text
    assert bad.code == -32602 and "period" in bad.message
