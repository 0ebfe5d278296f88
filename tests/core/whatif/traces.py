"""Hand-written traces in the seeds' shapes, with the usage and timings the seeds state."""

from __future__ import annotations

from typing import Any

import orjson

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from tests.core.rules.lint import echo, request_pair, results, text
from traces.core.reading.sample import SYSTEM, TOOLS, USER

CLINIC_PREFIX = 4_500


def sundry_run(turns: int = 12, order_turn: int = 3, order_tokens: int = 900) -> bytes:
    """Seed 003: a support ticket of `turns` calls; `get_order` on turn 3 returns 900
    tokens, every other turn asks `search_kb` (20 tokens). Usage is exact: each request
    adds the echoed call (10 output tokens) and the result."""
    messages = [user("Where is my order SU-88421? It replaced order SU-8.")]
    lines = []
    input_tokens = 1000
    for turn in range(1, turns + 1):
        last = turn == turns
        name = "get_order" if turn == order_turn else "search_kb"
        content: list[dict[str, Any]] = [text(f"step {turn}")]
        if not last:
            content.append(tool_use(f"t{turn}", name=name, query=f"SU-{turn}"))
        resp = response(content, "end_turn" if last else "tool_use", input_tokens, 10)
        lines.append(pair(list(messages), resp))
        result_tokens = order_tokens if turn == order_turn else 20
        messages += [echo(resp), results(tool_result(f"t{turn}", "x " * result_tokens))]
        input_tokens += 10 + result_tokens
    return log(*lines)


def _usage(input_tokens: int, output: int, read: int = 0, write: int = 0, write_1h: int = 0):
    usage: dict[str, Any] = {
        "input_tokens": input_tokens,
        "output_tokens": output,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
    }
    if write_1h:
        usage["cache_creation"] = {
            "ephemeral_5m_input_tokens": write - write_1h,
            "ephemeral_1h_input_tokens": write_1h,
        }
    return usage


def clinic_visit(gaps: tuple[float, float] = (60.0, 60.0), cached: list | None = None) -> bytes:
    """Seed 002: three turns of clinical scheduling, a 4.5k-token prefix (system + tools
    + the question), 15k input and 600 output in all: 4,500 / 5,000 / 5,500 in, 200 out
    each. `gaps` are the seconds between the requests' starts; `cached` optionally gives
    each call's (read, write, write_1h) to record a trace that used the cache."""
    q = [user("Book my follow-up with the cardiologist who saw me in March.")]
    tools = [
        {"name": name, "description": "…", "input_schema": {"type": "object"}}
        for name in ("search_encounters", "get_availability", "book_slot")
    ]
    r1 = response([tool_use("e1", name="search_encounters", specialty="cardiology")], "tool_use")
    r2 = response([tool_use("a1", name="get_availability", provider_id="P-4471")], "tool_use")
    r3 = response([text("Which of these six slots suits you?")], "end_turn")
    h2 = [*q, echo(r1), results(tool_result("e1", '{"provider_id": "P-4471"}'))]
    h3 = [*h2, echo(r2), results(tool_result("a1", "six slots"))]
    starts = [1_800_000_000.0]
    starts += [starts[0] + gaps[0], starts[0] + gaps[0] + gaps[1]]
    lines = []
    for n, (history, resp, total) in enumerate(((q, r1, 4500), (h2, r2, 5000), (h3, r3, 5500))):
        read, write, write_1h = (cached or [(0, 0, 0)] * 3)[n]
        resp["usage"] = _usage(total - read - write, 200, read, write, write_1h)
        lines.append(
            request_pair(
                history,
                resp,
                system="Clinic intake.",
                tools=tools,
                started_at=starts[n],
                ended_at=starts[n] + 1.8,
            )
        )
    return log(*lines)


def calendar_serial() -> bytes:
    """Seed 000's calendar task with the two availability checks asked one per round
    trip (the interview's "second-worst answer"): five calls instead of four. The
    prefix is 800, results 400 / 300 / 300 / 60, outputs 60 / 60 / 60 / 80 / 80."""
    q = [{"role": "user", "content": USER}]
    r1 = response(
        [
            tool_use(
                "s1", name="find_free_slots", **{"from": "2026-11-30T08:00", "to": "2026-12-05"}
            )
        ],
        "tool_use",
    )
    r2 = response(
        [
            text("Slot 3 works for you. Checking priya, then tom."),
            tool_use("p1", name="check_availability", attendee="priya", slot="slot_3"),
        ],
        "tool_use",
    )
    r3 = response(
        [tool_use("t1", name="check_availability", attendee="tom", slot="slot_3")], "tool_use"
    )
    booking = {"slot": "slot_3", "title": "Priya / Tom / Dana", "attendees": ["priya", "tom"]}
    r4 = response([tool_use("c1", name="create_event", **booking)], "tool_use")
    r5 = response([text("Booked Thursday 14:00 with Priya.")], "end_turn")
    h2 = [*q, echo(r1), results(tool_result("s1", "eight slots"))]
    h3 = [*h2, echo(r2), results(tool_result("p1", "priya is free"))]
    h4 = [*h3, echo(r3), results(tool_result("t1", "error: timed out after 5 s", True))]
    h5 = [*h4, echo(r4), results(tool_result("c1", "evt_5521"))]
    usage = [(800, 60), (1260, 60), (1620, 60), (1980, 80), (2120, 80)]
    durations = [1.9, 2.6, 2.4, 1.7, 1.8]
    lines = []
    clock = 1_796_000_000.0
    for history, resp, (tokens, output), seconds in zip(
        (q, h2, h3, h4, h5), (r1, r2, r3, r4, r5), usage, durations, strict=True
    ):
        resp["usage"] = _usage(tokens, output)
        lines.append(
            request_pair(
                history,
                resp,
                system=SYSTEM,
                tools=TOOLS,
                started_at=clock,
                ended_at=clock + seconds,
            )
        )
        clock += seconds + 0.5
    return log(*lines)


def three_tools_events(seconds: float = 2.0, concurrent: bool = False) -> bytes:
    """Our own event format: one response asks three independent lookups that take
    `seconds` each, run one after another (or at once), then the final answer."""
    q = [user("Where are my three parcels?")]
    asks = [tool_use(f"t{n}", name="track_parcel", parcel=f"P-{n}00") for n in (1, 2, 3)]
    r1 = response(asks, "tool_use")
    h2 = [*q, echo(r1), results(*(tool_result(f"t{n}", "in transit") for n in (1, 2, 3)))]
    body = {"model": "claude-sonnet-4-5", "tools": [], "messages": q}
    events = [
        {"type": "meta", "format": "loop-inspector/events/v1", "provider": "anthropic"},
        {"type": "request", "call_id": "c1", "ts": 100.0, "body": body},
        {"type": "response", "call_id": "c1", "ts": 102.0, "body": r1},
    ]
    clock = 102.0
    for n in (1, 2, 3):
        start = 102.0 if concurrent else clock
        events.append({"type": "tool_start", "tool_call_id": f"t{n}", "ts": start})
        events.append({"type": "tool_end", "tool_call_id": f"t{n}", "ts": start + seconds})
        clock = start + seconds
    end = max(clock, 102.0 + seconds)
    events += [
        {"type": "request", "call_id": "c2", "ts": end + 0.1, "body": {**body, "messages": h2}},
        {
            "type": "response",
            "call_id": "c2",
            "ts": end + 2.0,
            "body": response([text("ok")], "end_turn"),
        },
    ]
    return log(*(orjson.dumps(event) for event in events))
