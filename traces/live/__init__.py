"""Live traces: lines stored as they arrive, shown to viewers at once, the report following.

One job a module: `writes` (create, append, close, sweep), `sessions` (each process's
cache of the core's sessions), `events` (what changed, stored and broadcast), `reports`
(the full report, rebuilt), `worker` (refreshes as queue tasks, coalesced), `api` and
`urls` (the HTTP side). Callers use the names below.
"""

from traces.live.events import (
    RUNNING,
    encode_event,
    encoded_events_after,
    event_message,
    events_after,
    held_messages,
    held_payload,
)
from traces.live.sessions import forget_sessions, split_body
from traces.live.worker import wait_for_reports
from traces.live.writes import (
    AppendResult,
    LiveError,
    OffsetGap,
    TraceNotLive,
    append_lines,
    close_live_trace,
    create_live_trace,
    live_status,
    sweep_idle,
)

__all__ = (
    "RUNNING",
    "AppendResult",
    "LiveError",
    "OffsetGap",
    "TraceNotLive",
    "append_lines",
    "close_live_trace",
    "create_live_trace",
    "encode_event",
    "encoded_events_after",
    "event_message",
    "events_after",
    "forget_sessions",
    "held_messages",
    "held_payload",
    "live_status",
    "split_body",
    "sweep_idle",
    "wait_for_reports",
)
