"""Live tail latency: from POSTing lines to a websocket viewer receiving the new call.

Starts a local daphne (in-memory channel layer, a fresh SQLite file) on a free loopback
port, then for each scenario (lines per second x viewers) creates a live trace, connects
the viewers, and plays an agent's event log (Loop Inspector's format: request, response,
tool_start, tool_end per call; conversations of 10 calls so lines stay small) at that rate
for a bounded time. One sender posts whatever lines are waiting, one batch at a time,
like the recorder in clients/. For every call and viewer it records:

- POST -> viewer: from the start of the POST that carried the call's response line to
  the viewer receiving the call (the figure the target is about: p95 < 100 ms at
  200 lines/s with 50 viewers on a 2-core machine);
- line -> viewer: from the moment the line was written (it may wait for the previous
  POST to be acknowledged).

The baseline, measured in the same run: the round trip of an empty HTTP GET (a small
static file) and of the lines-status GET (one database read).

    .venv/bin/python bench/live.py [--seconds 8] [--rates 20,200] [--viewers 1,50]

The benchmark client (viewers included) runs in this one process beside the server, on
the same cores: its own work is part of the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.live.servers import daphne, migrate, server_env  # noqa: E402
from tests.live.wsclient import connect  # noqa: E402

MODEL = "claude-sonnet-4-5"
CALLS_PER_CONVERSATION = 10
CALL_PREFIX = '{"type":"call"'
"""How a call message starts (the server writes `type` first, without spaces)."""


def agent_log(lines_wanted: int) -> list[tuple[bytes, int | None]]:
    """(line, index of the call its response completes or None), `lines_wanted` of them."""
    out: list[tuple[bytes, int | None]] = []
    calls = 0
    conversation = 0
    ts = 1_750_000_000.0

    def emit(completes: int | None = None, **event) -> None:
        out.append((orjson.dumps({**event, "ts": ts}), completes))

    while len(out) < lines_wanted:
        conversation += 1
        messages: list[dict] = [{"role": "user", "content": f"Task {conversation}: research."}]
        for step in range(1, CALLS_PER_CONVERSATION + 1):
            call_id, tool_id = f"c{conversation}-{step}", f"toolu_{conversation}_{step}"
            body = {"model": MODEL, "max_tokens": 512, "messages": list(messages)}
            emit(type="request", call_id=call_id, body=body)
            last = step == CALLS_PER_CONVERSATION
            content: list[dict] = [{"type": "text", "text": f"Step {step} of {conversation}."}]
            if not last:
                content.append(
                    {"type": "tool_use", "id": tool_id, "name": "search", "input": {"q": call_id}}
                )
            reply = {
                "id": f"msg_{call_id}",
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": content,
                "stop_reason": "end_turn" if last else "tool_use",
                "usage": {"input_tokens": 200 + 60 * step, "output_tokens": 30},
            }
            calls += 1
            ts += 0.5
            emit(calls, type="response", call_id=call_id, body=reply)
            if last:
                break
            ts += 0.1
            emit(type="tool_start", tool_call_id=tool_id, name="search")
            ts += 0.3
            emit(type="tool_end", tool_call_id=tool_id, name="search", is_error=False)
            result = {"type": "tool_result", "tool_use_id": tool_id, "content": "a result " * 20}
            messages.append({"role": "assistant", "content": content})
            messages.append({"role": "user", "content": [result]})
    return out[:lines_wanted]


class Http:
    """One keep-alive connection, used from a worker thread."""

    def __init__(self, base: str) -> None:
        host, port = base.removeprefix("http://").split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=30)

    def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        headers = {"Content-Type": "application/x-ndjson"} if body is not None else {}
        self.connection.request(method, path, body=body, headers=headers)
        reply = self.connection.getresponse()
        return reply.status, reply.read()


@dataclass
class Scenario:
    rate: int
    viewers: int
    seconds: float
    post_ms: list[float] = field(default_factory=list)
    line_ms: list[float] = field(default_factory=list)
    posts: int = 0
    calls: int = 0
    missing: int = 0


async def run_scenario(base: str, scenario: Scenario) -> None:
    http_client = Http(base)
    status, body = await asyncio.to_thread(
        http_client.request, "POST", "/api/traces?live=1&name=bench&format=loop-inspector", b""
    )
    trace_id = json.loads(body)["id"]
    lines = agent_log(int(scenario.rate * scenario.seconds))
    expected_calls = sum(1 for _, index in lines if index is not None)
    received: list[dict[int, float]] = [{} for _ in range(scenario.viewers)]
    sockets = [
        await connect(f"{base.replace('http', 'ws')}/ws/traces/{trace_id}/")
        for _ in range(scenario.viewers)
    ]

    async def listen(socket, seen: dict[int, float]) -> None:
        while len(seen) < expected_calls:
            text = await socket.recv()
            if text is None:
                return
            arrived = time.perf_counter()
            for line in text.splitlines():
                if line.startswith(CALL_PREFIX):  # only calls are timed: parse only those
                    seen.setdefault(json.loads(line)["data"]["index"], arrived)

    listeners = [
        asyncio.create_task(listen(s, seen)) for s, seen in zip(sockets, received, strict=True)
    ]
    written_at: dict[int, float] = {}
    posted_at: dict[int, float] = {}
    start = time.perf_counter()
    sent = 0
    while sent < len(lines):
        now = time.perf_counter()
        due = min(len(lines), int((now - start) * scenario.rate) + 1)
        if due <= sent:
            await asyncio.sleep(max(0.0, start + sent / scenario.rate - now))
            continue
        batch = lines[sent:due]
        for position, (_, index) in enumerate(batch, start=sent):
            if index is not None:
                written_at[index] = start + position / scenario.rate
        body = b"".join(line + b"\n" for line, _ in batch)
        post_started = time.perf_counter()
        for _, index in batch:
            if index is not None:
                posted_at[index] = post_started
        status, reply = await asyncio.to_thread(
            http_client.request, "POST", f"/api/traces/{trace_id}/lines?offset={sent}", body
        )
        if status != 200:
            raise RuntimeError(f"POST lines answered {status}: {reply[:200]!r}")
        sent = json.loads(reply)["total"]
        scenario.posts += 1
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*listeners), 60)
    for seen in received:
        for index in range(1, expected_calls + 1):
            arrived = seen.get(index)
            if arrived is None:
                scenario.missing += 1
                continue
            scenario.post_ms.append((arrived - posted_at[index]) * 1000)
            scenario.line_ms.append((arrived - written_at[index]) * 1000)
    scenario.calls = expected_calls
    for socket in sockets:
        await socket.close()
    await asyncio.to_thread(http_client.request, "POST", f"/api/traces/{trace_id}/close", b"")


def baseline(base: str, repeat: int = 300) -> dict[str, float]:
    http_client = Http(base)
    _, body = http_client.request("POST", "/api/traces?live=1&name=baseline", b"")
    trace_id = json.loads(body)["id"]
    figures = {}
    for label, path in (
        ("GET static file", "/static/img/favicon.svg"),
        ("GET lines status", f"/api/traces/{trace_id}/lines"),
    ):
        timings = []
        for _ in range(repeat):
            started = time.perf_counter()
            http_client.request("GET", path)
            timings.append((time.perf_counter() - started) * 1000)
        figures[label] = statistics.median(timings)
    return figures


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def spread(values: list[float]) -> str:
    return " / ".join(f"{percentile(values, q):5.1f}" for q in (0.5, 0.95, 0.99))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--rates", default="20,200")
    parser.add_argument("--viewers", default="1,50")
    args = parser.parse_args()
    rates = [int(r) for r in args.rates.split(",")]
    viewer_counts = [int(v) for v in args.viewers.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        env = server_env(DATABASE_URL=f"sqlite:///{folder}/bench.sqlite3", REDIS_URL="")
        migrate(env)
        with daphne(env, Path(folder) / "daphne.log") as base:
            base_figures = baseline(base)
            print(f"daphne at {base} (in-memory channel layer, SQLite), {args.seconds:g} s each")
            print(
                "baseline (median round trip): "
                + ", ".join(f"{k} {v:.2f} ms" for k, v in base_figures.items())
            )
            print()
            header = ("lines/s", "viewers", "calls", "posts", "POST->viewer", "line->viewer")
            print("{:>7} {:>7} {:>5} {:>5}  {:>24}  {:>24}  missing".format(*header))
            print(f"{'':>28}{'p50 / p95 / p99 ms':>24}  {'p50 / p95 / p99 ms':>24}")
            for rate in rates:
                for viewers in viewer_counts:
                    scenario = Scenario(rate, viewers, args.seconds)
                    asyncio.run(run_scenario(base, scenario))
                    figures = (
                        rate,
                        viewers,
                        scenario.calls,
                        scenario.posts,
                        spread(scenario.post_ms),
                        spread(scenario.line_ms),
                        scenario.missing,
                    )
                    print("{:>7} {:>7} {:>5} {:>5}  {:>24}  {:>24}  {}".format(*figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
