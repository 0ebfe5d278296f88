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
  POST to be acknowledged);
- answer -> viewer: from the POST's answer to the viewer receiving the call, the fan-out
  alone (the append's own cost is bench/live_append.py's); negative when the call
  reached the viewer before the POST's answer reached the sender;
- POST: the POST's round trip (p50 / p95).

The baseline, measured in the same run: the round trip of an empty HTTP GET (a small
static file) and of the lines-status GET (one database read).

    PYTHONPYCACHEPREFIX=/tmp/pycache .venv/bin/python bench/live.py [--seconds 8]
        [--rates 20,200] [--viewers 1,50] [--redis redis://127.0.0.1:6379/N]
        [--rounds 3] [--against REV]

`--against` serves the tree at REV too (`git archive`, this venv), the two daphnes
taking turns each round on a fresh database: its figures are the baseline of the same
run, and the medians over rounds end with this tree's over REV's.

`--redis` runs the server with the Redis channel layer (channels_redis) on that
database instead of the in-memory one; the database stays a fresh SQLite file.

The benchmark client (viewers included) runs in this one process beside the server, on
the same cores: its own work is part of the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import statistics
import subprocess
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
    answer_ms: list[float] = field(default_factory=list)
    round_trip_ms: list[float] = field(default_factory=list)
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
    answered_at: dict[int, float] = {}
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
        answered = time.perf_counter()
        scenario.round_trip_ms.append((answered - post_started) * 1000)
        for _, index in batch:
            if index is not None:
                answered_at[index] = answered
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
            scenario.answer_ms.append((arrived - answered_at[index]) * 1000)
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


def previous_tree(revision: str, folder: Path) -> Path:
    """The tree at `revision`, extracted with `git archive` (served by this venv)."""
    tree = folder / "previous"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "archive", revision], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def serve_and_run(
    root: Path, args: argparse.Namespace, scenarios: list[tuple[int, int]]
) -> tuple[dict[str, float], list[Scenario]]:
    """One daphne of the tree at `root` on a fresh database: its baseline round trips
    and every scenario, in order."""
    with tempfile.TemporaryDirectory() as folder:
        env = server_env(DATABASE_URL=f"sqlite:///{folder}/bench.sqlite3", REDIS_URL=args.redis)
        env["PYTHONPYCACHEPREFIX"] = os.environ.get("PYTHONPYCACHEPREFIX") or f"{folder}/pyc"
        migrate(env, root)
        with daphne(env, Path(folder) / "daphne.log", root=root) as base:
            base_figures = baseline(base)
            done = []
            for rate, viewers in scenarios:
                scenario = Scenario(rate, viewers, args.seconds)
                asyncio.run(run_scenario(base, scenario))
                done.append(scenario)
    return base_figures, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--rates", default="20,200")
    parser.add_argument("--viewers", default="1,50")
    parser.add_argument("--redis", default="", help="a Redis URL: the Redis channel layer")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--against", default="none", help="a revision to serve too, in turns (none: skip)"
    )
    args = parser.parse_args()
    scenarios = [
        (int(rate), int(viewers))
        for rate in args.rates.split(",")
        for viewers in args.viewers.split(",")
    ]
    layer = f"Redis channel layer at {args.redis}" if args.redis else "in-memory channel layer"
    print(f"daphne ({layer}, SQLite), {args.seconds:g} s per scenario, {args.rounds} round(s)")
    with tempfile.TemporaryDirectory() as folder:
        trees = {"this tree": ROOT}
        if args.against != "none":
            trees[args.against] = previous_tree(args.against, Path(folder))
        results: dict[str, list[list[Scenario]]] = {name: [] for name in trees}
        for round_number in range(1, args.rounds + 1):
            for name, root in trees.items():
                base_figures, done = serve_and_run(root, args, scenarios)
                results[name].append(done)
                print(
                    f"\nround {round_number}, {name}: baseline (median round trip) "
                    + ", ".join(f"{k} {v:.2f} ms" for k, v in base_figures.items())
                )
                print_table(done)
    if len(trees) > 1 or args.rounds > 1:
        print_medians(results, scenarios)
    return 0


HEADER = ("lines/s", "viewers", "calls", "posts", "POST->viewer", "line->viewer",
          "answer->viewer", "POST")  # fmt: skip
ROW = "{:>7} {:>7} {:>5} {:>5}  {:>24}  {:>24}  {:>24}  {:>15}  {}"


def print_table(done: list[Scenario]) -> None:
    print(ROW.format(*HEADER, "missing"))
    spans = ("p50 / p95 / p99 ms",) * 3 + ("p50 / p95 ms", "")
    print(ROW.format("", "", "", "", *spans))
    for scenario in done:
        trip = " / ".join(f"{percentile(scenario.round_trip_ms, q):5.0f}" for q in (0.5, 0.95))
        print(
            ROW.format(
                scenario.rate,
                scenario.viewers,
                scenario.calls,
                scenario.posts,
                spread(scenario.post_ms),
                spread(scenario.line_ms),
                spread(scenario.answer_ms),
                trip,
                scenario.missing,
            )
        )


def print_medians(results: dict[str, list[list[Scenario]]], scenarios: list) -> None:
    """Per scenario, the median over rounds of each tree's POST->viewer p50 and p95, and
    this tree's over the other's."""
    names = list(results)
    print("\nmedians over rounds, POST->viewer ms (p50 / p95), answer->viewer p95")
    for position, (rate, viewers) in enumerate(scenarios):
        cells = []
        figures = {}
        for name in names:
            runs = [done[position] for done in results[name]]
            p50 = statistics.median(percentile(r.post_ms, 0.5) for r in runs)
            p95 = statistics.median(percentile(r.post_ms, 0.95) for r in runs)
            fan = statistics.median(percentile(r.answer_ms, 0.95) for r in runs)
            figures[name] = (p50, p95, fan)
            cells.append(f"{name}: {p50:7.1f} / {p95:7.1f}, {fan:7.1f}")
        line = f"{rate:>5} lines/s x {viewers:>3} viewers  " + "   ".join(cells)
        if len(names) > 1:
            new, old = figures[names[0]], figures[names[1]]
            line += "   ratio " + " / ".join(
                f"{a / b:.2f}x" if b else "-" for a, b in zip(new, old, strict=True)
            )
        print(line)


if __name__ == "__main__":
    sys.exit(main())
