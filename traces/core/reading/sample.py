"""The bundled sample: the seeds' three-tool calendar assistant as an Anthropic pair log.

Four calls, one parallel batch, one tool that times out and is returned as an error
result, usage matching the seed's worked example (800 / 1,260 / 1,980 / 2,120 input).
"""

from __future__ import annotations

from typing import Any

import orjson

MODEL = "claude-sonnet-4-5"
SYSTEM = (
    "You are a scheduling assistant for Dana Whitfield (Europe/Vienna). Book meetings in "
    "the organiser's calendar. Always check every attendee before booking, never double-book, "
    "and say plainly when a check could not be completed."
)
TOOLS: list[dict[str, Any]] = [
    {
        "name": "find_free_slots",
        "description": "Return free 30-minute slots in the organiser's calendar between two "
        "ISO timestamps. Use before proposing a meeting time. Does not check other attendees.",
        "input_schema": {
            "type": "object",
            "properties": {
                "from": {"type": "string", "description": "ISO 8601 start, organiser's timezone"},
                "to": {"type": "string", "description": "ISO 8601 end"},
            },
            "required": ["from", "to"],
            "additionalProperties": False,
        },
    },
    {
        "name": "check_availability",
        "description": "Check whether one attendee is free in a slot. Returns free or busy.",
        "input_schema": {
            "type": "object",
            "properties": {
                "attendee": {"type": "string", "description": "Attendee handle, e.g. priya"},
                "slot": {"type": "string", "description": "Slot id from find_free_slots"},
            },
            "required": ["attendee", "slot"],
            "additionalProperties": False,
        },
    },
    {
        "name": "create_event",
        "description": "Create a calendar event and send invitations. Returns the event id.",
        "input_schema": {
            "type": "object",
            "properties": {
                "slot": {"type": "string"},
                "title": {"type": "string"},
                "attendees": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["slot", "title", "attendees"],
            "additionalProperties": False,
        },
    },
]
USER = "Book 30 minutes with Priya and Tom this week."
SLOTS = [
    {"id": f"slot_{n}", "start": start, "end": end}
    for n, (start, end) in enumerate(
        [
            ("2026-11-30T09:00", "2026-11-30T09:30"),
            ("2026-11-30T15:30", "2026-11-30T16:00"),
            ("2026-12-03T14:00", "2026-12-03T14:30"),
            ("2026-12-03T16:00", "2026-12-03T16:30"),
            ("2026-12-04T10:00", "2026-12-04T10:30"),
            ("2026-12-04T11:30", "2026-12-04T12:00"),
            ("2026-12-05T09:30", "2026-12-05T10:00"),
            ("2026-12-05T13:00", "2026-12-05T13:30"),
        ],
        start=1,
    )
]


def _usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    }


def _response(
    n: int, content: list[dict[str, Any]], stop: str, usage: dict[str, Any]
) -> dict[str, Any]:
    return {
        "id": f"msg_01SampleCalendar{n:04d}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


def sample_lines() -> list[bytes]:
    """The four request/response pairs of the calendar task, one JSON object each."""
    t0 = 1_796_000_000.0
    turn1 = [
        {"type": "text", "text": "I'll look for free slots this week first."},
        {
            "type": "tool_use",
            "id": "toolu_01FreeSlots7Qk",
            "name": "find_free_slots",
            "input": {"from": "2026-11-30T08:00", "to": "2026-12-05T18:00"},
        },
    ]
    turn2 = [
        {"type": "text", "text": "Slot 3 (Thursday 14:00) works for you. Checking both now."},
        {
            "type": "tool_use",
            "id": "toolu_01CheckPriya2Lm",
            "name": "check_availability",
            "input": {"attendee": "priya", "slot": "slot_3"},
        },
        {
            "type": "tool_use",
            "id": "toolu_01CheckTom9Xe",
            "name": "check_availability",
            "input": {"attendee": "tom", "slot": "slot_3"},
        },
    ]
    turn3 = [
        {
            "type": "tool_use",
            "id": "toolu_01CreateEvt4Ra",
            "name": "create_event",
            "input": {
                "slot": "slot_3",
                "title": "Priya / Tom / Dana: 30 min",
                "attendees": ["priya", "tom"],
            },
        }
    ]
    turn4 = [
        {
            "type": "text",
            "text": "Booked Thursday 14:00 with Priya; Tom's calendar was unreachable, so I "
            "invited him without checking.",
        }
    ]
    results2 = [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01FreeSlots7Qk",
            "content": orjson.dumps({"slots": SLOTS, "timezone": "Europe/Vienna"}).decode(),
        }
    ]
    results3 = [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01CheckPriya2Lm",
            "content": '{"attendee": "priya", "slot": "slot_3", "status": "free"}',
        },
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01CheckTom9Xe",
            "content": "error: calendar service timed out after 5 s",
            "is_error": True,
        },
    ]
    results4 = [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01CreateEvt4Ra",
            "content": '{"event_id": "evt_5521", "status": "confirmed"}',
        }
    ]
    turns = [
        (turn1, "tool_use", _usage(800, 60), results2, 1.9, 0.4),
        (turn2, "tool_use", _usage(1260, 120), results3, 2.6, 5.1),
        (turn3, "tool_use", _usage(1980, 80), results4, 1.7, 0.6),
        (turn4, "end_turn", _usage(2120, 80), None, 1.8, 0.0),
    ]
    return _pair_lines(turns, t0)


def serial_sample_lines() -> list[bytes]:
    """The same task with the two availability checks asked one per round trip: five
    calls instead of four, the seed's "extra round trip" (each check 60 tokens of output
    and a 300-token result, so the third call reads 1,620 tokens and the total input
    grows from 6,160 to 7,780)."""
    parallel = [orjson.loads(line) for line in sample_lines()]
    bodies = [record["response"]["body"] for record in parallel]
    turn1, turn2, turn3, turn4 = (body["content"] for body in bodies)
    # The serial answer names both attendees before the first check comes back, so
    # serial-independent-calls can prove the second check did not need the first.
    check_priya, check_tom = turn2[1], turn2[2]
    free_slots = parallel[1]["request"]["body"]["messages"][2]["content"]
    priya_result, tom_result = parallel[2]["request"]["body"]["messages"][4]["content"]
    event_result = parallel[3]["request"]["body"]["messages"][6]["content"]
    turns = [
        (turn1, "tool_use", _usage(800, 60), free_slots, 1.9, 0.4),
        (
            [
                {
                    "type": "text",
                    "text": "Slot 3 (Thursday 14:00) works for you. Checking priya, then tom.",
                },
                check_priya,
            ],
            "tool_use",
            _usage(1260, 60),
            [priya_result],
            1.6,
            0.5,
        ),
        (
            [{"type": "text", "text": "Priya is free. Now Tom."}, check_tom],
            "tool_use",
            _usage(1620, 60),
            [tom_result],
            1.5,
            5.1,
        ),
        (turn3, "tool_use", _usage(1980, 80), event_result, 1.7, 0.6),
        (turn4, "end_turn", _usage(2120, 80), None, 1.8, 0.0),
    ]
    return _pair_lines(turns, 1_796_000_000.0)


def _pair_lines(turns: list[tuple[Any, ...]], t0: float) -> list[bytes]:
    """One request/response pair per turn, each request carrying the whole transcript."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": USER}]
    lines = []
    clock = t0
    for n, (content, stop, usage, results, model_s, tool_s) in enumerate(turns, start=1):
        request = {
            "model": MODEL,
            "max_tokens": 1024,
            "system": SYSTEM,
            "tools": TOOLS,
            "messages": [dict(m) for m in messages],
        }
        record = {
            "request": {
                "timestamp": clock,
                "method": "POST",
                "url": "/v1/messages",
                "body": request,
            },
            "response": {
                "timestamp": clock + model_s,
                "status_code": 200,
                "body": _response(n, content, stop, usage),
            },
        }
        lines.append(orjson.dumps(record))
        clock += model_s + tool_s
        messages.append({"role": "assistant", "content": content})
        if results is not None:
            messages.append({"role": "user", "content": results})
    return lines


def sample_bytes() -> bytes:
    return b"\n".join(sample_lines()) + b"\n"


def serial_sample_bytes() -> bytes:
    return b"\n".join(serial_sample_lines()) + b"\n"
