"""Load and faults: 2 web processes + 2 workers on PostgreSQL, Redis and an S3 emulator.

Starts, all on 127.0.0.1 in the 9800-9899 port range: moto's S3 server (a fresh bucket),
two daphnes and two `manage.py run_huey` workers sharing a throwaway PostgreSQL database
(`load_bench`, dropped at the end) and Redis db 5 (flushed before and after). Then, for a
fixed time, from this one process:

- uploads: N clients each uploading an agent log (NDJSON) again and again, then opening
  the new trace's page; every 4th upload is over the background threshold (set to 200 kB
  for this run by a settings module in the temporary folder), so it is answered 202 and
  ingested by a worker while the client follows its job to the end;
- live traces: T traces appending lines at R lines/s over the HTTP live API (the offset
  protocol: a batch lost with a web process is re-sent at the same offset to the other);
- viewers: V websockets spread over the live traces and both web processes, each doing
  what the trace page does (static/js/live.js): it takes messages in seq order, asks for a
  hole at once (`resume`), pings every PING_SECONDS, reconnects with `?after=<last seq>`
  after a dropped socket or a failed attempt, with the page's backoff (0.5 s doubling to
  15 s, jittered; a refused connection goes to the other process at once, as a load
  balancer would), until the trace is closed and it holds every stored event.

Halfway through, one worker and one web process are killed with SIGKILL; clients retry
against the survivor. At the end every live trace is closed and its stored `lines_total`
compared with the lines sent; every uploaded trace is fetched from the survivor.

Printed: errors (target 0: requests that failed even after retrying), lines lost
(target 0), traces incomplete, viewer deliveries missing (target 0: each viewer's final
state is compared with the trace's stored events, by seq and by call), the viewers'
reconnect handshakes (how long those that opened took, why the others failed), p95 page
time and p95 live latency (POST of the line completing a call -> a viewer receiving that
call), each beside its unloaded baseline (the same page, and one viewer of one trace,
before the load).

    .venv/bin/python bench/load.py [--quick] [--uploads 50] [--live 20] [--rate 50]
                                   [--viewers 200] [--seconds 60] [--no-faults]

The load client runs beside the servers on the same cores: its work is part of the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.live import CALL_PREFIX, agent_log  # noqa: E402
from tests.live.servers import migrate, server_env  # noqa: E402
from tests.live.wsclient import connect  # noqa: E402

HOST = "127.0.0.1"
# Several people benchmarking on one machine each take their own ports, database and
# Redis db: LOAD_PORTS=18300-18399 LOAD_DATABASE=load_me LOAD_REDIS_DB=13.
_first, _, _last = os.environ.get("LOAD_PORTS", "9800-9899").partition("-")
PORTS = range(int(_first), int(_last or _first) + 1)
DATABASE = os.environ.get("LOAD_DATABASE", "load_bench")
REDIS_DB = int(os.environ.get("LOAD_REDIS_DB", "5"))
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_EC2_METADATA_DISABLED": "true",
}
BACKGROUND_BYTES = 200_000
"""Uploads over this size go to a worker (the default, 8 MB, would only load the disk)."""
BACKGROUND_EVERY = 4
JOB_SECONDS = 60
"""How long a client follows a background job before it counts it as lost and re-uploads."""
RETRIES = 6
"""Attempts per request across the web processes before it counts as an error."""
PING_SECONDS = 5.0
"""How often a viewer asks for what it may have missed, as the page does."""
VIEW_SECONDS = 120
"""How long viewers may take, after the last line, to hold every stored event."""
RECONNECT_FIRST_SECONDS = 0.5
RECONNECT_MAX_SECONDS = 15.0
"""A viewer waits as the page does (static/js/live.js) before it reconnects: 0.5 s after a
socket that was open drops, doubling after each attempt that fails, at most 15 s, each
delay jittered by +-20 % so a crowd that lost one process does not come back in step."""


def reconnect_delay(failures: int) -> float:
    """Seconds before the next attempt, after `failures` attempts failed in a row."""
    delay = min(RECONNECT_MAX_SECONDS, RECONNECT_FIRST_SECONDS * 2**failures)
    return delay * (0.8 + 0.4 * random.random())


def free_ports(count: int) -> list[int]:
    found = []
    for port in PORTS:
        with socket.socket() as probe:
            try:
                probe.bind((HOST, port))
            except OSError:
                continue
        found.append(port)
        if len(found) == count:
            return found
    raise SystemExit(f"fewer than {count} free ports in {PORTS.start}-{PORTS.stop - 1}")


class Processes:
    """Every child, each in its own process group, killed at the end whatever happens."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.children: dict[str, subprocess.Popen] = {}

    def start(self, name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen:
        with open(self.folder / f"{name}.log", "ab") as log:
            process = subprocess.Popen(
                argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        self.children[name] = process
        return process

    def kill(self, name: str) -> None:
        process = self.children[name]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)

    def stop_all(self) -> None:
        for process in self.children.values():
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for process in self.children.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)

    def wait_port(self, name: str, port: int, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        process = self.children[name]
        while time.monotonic() < deadline:
            if process.poll() is not None:
                log = (self.folder / f"{name}.log").read_text(errors="replace")
                raise RuntimeError(f"{name} exited: {log[-2000:]}")
            with socket.socket() as probe:
                if probe.connect_ex((HOST, port)) == 0:
                    return
            time.sleep(0.1)
        raise RuntimeError(f"{name} did not listen on {port}")


def admin_database(statement: str) -> None:
    import psycopg

    with psycopg.connect(f"postgresql://postgres@{HOST}:5432/postgres", autocommit=True) as db:
        db.execute(statement)


def flush_redis() -> None:
    import redis

    redis.Redis(host=HOST, port=6379, db=REDIS_DB).flushdb()


@dataclass
class Figures:
    errors: list[str] = field(default_factory=list)
    retried: int = 0
    uploads: int = 0
    background: int = 0
    jobs_lost: int = 0
    upload_ids: list[str] = field(default_factory=list)
    page_ms: list[float] = field(default_factory=list)
    live_ms: list[float] = field(default_factory=list)
    lines_sent: int = 0
    lines_stored: int = 0
    incomplete: list[str] = field(default_factory=list)
    viewer_reconnects: int = 0
    handshake_ms: list[float] = field(default_factory=list)
    """TCP connect to the socket open, of each viewer attempt that opened after the first."""
    handshakes_failed: dict[str, int] = field(default_factory=dict)
    """Viewer connection attempts that did not open, by why (refused, timed out, closed)."""
    calls_expected: int = 0
    calls_missing: int = 0
    events_missing: int = 0
    viewers_behind: int = 0
    repeated: int = 0
    gaps_asked: int = 0
    pings: int = 0
    converge_s: list[float] = field(default_factory=list)
    connections_peak: int = 0


class Web:
    """Requests to whichever web process answers: each client starts on its own and moves
    to the other when a connection fails."""

    def __init__(self, bases: list[str], figures: Figures) -> None:
        self.bases = bases
        self.dead: set[str] = set()
        self.figures = figures
        limits = httpx.Limits(max_connections=400, max_keepalive_connections=200)
        self.client = httpx.AsyncClient(timeout=30, limits=limits)

    def base(self, preferred: int) -> str:
        alive = [b for b in self.bases if b not in self.dead] or self.bases
        return alive[preferred % len(alive)]

    async def request(
        self, method: str, path: str, preferred: int, body: bytes | None = None
    ) -> httpx.Response | None:
        """The answer, or None once every attempt failed (counted as an error)."""
        headers = {"Content-Type": "application/x-ndjson"} if body is not None else {}
        attempts: list[str] = []
        for attempt in range(RETRIES):
            base = self.base(preferred + attempt)
            try:
                reply = await self.client.request(
                    method, base + path, content=body, headers=headers
                )
            except httpx.TransportError as exc:
                attempts.append(f"{type(exc).__name__} from {base}")
                self.figures.retried += 1
                await asyncio.sleep(0.2 * (attempt + 1))
                continue
            if reply.status_code >= 500:
                attempts.append(f"{reply.status_code} from {base}")
                self.figures.retried += 1
                await asyncio.sleep(0.2 * (attempt + 1))
                continue
            return reply
        self.figures.errors.append(f"{method} {path}: {'; '.join(attempts)}")
        return None


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


async def follow_job(web: Web, number: int, job: dict, figures: Figures) -> str | None:
    """The trace a background job made; None if it failed or never finished."""
    deadline = time.monotonic() + JOB_SECONDS
    while time.monotonic() < deadline:
        reply = await web.request("GET", f"/api/jobs/{job['id']}", number)
        if reply is None:
            return None
        if reply.status_code != 200:
            figures.errors.append(f"job answered {reply.status_code}")
            return None
        job = reply.json()
        if job["state"] == "done":
            return job["trace"]
        if job["state"] == "failed":
            figures.errors.append(f"job failed: {job['error']}")
            return None
        await asyncio.sleep(0.5)
    figures.jobs_lost += 1
    return None


async def uploader(
    web: Web, number: int, bodies: tuple[bytes, bytes], until: float, figures: Figures
) -> None:
    done = 0
    while time.monotonic() < until:
        background = (done + number) % BACKGROUND_EVERY == 0
        body = bodies[background]
        path = f"/api/traces?format=loop-inspector&name=load-{number}-{done}"
        reply = await web.request("POST", path, number, body)
        if reply is None:
            continue
        if reply.status_code == 202 and background:
            trace_id = await follow_job(web, number, reply.json(), figures)
            if trace_id is None:
                continue  # lost or failed: upload it again (the client's retry)
            figures.background += 1
        elif reply.status_code == 201 and not background:
            trace_id = reply.json()["id"]
        else:
            figures.errors.append(f"upload answered {reply.status_code}: {reply.text[:200]}")
            continue
        done += 1
        figures.uploads += 1
        figures.upload_ids.append(trace_id)
        started = time.perf_counter()
        page = await web.request("GET", f"/traces/{trace_id}/", number)
        if page is not None and page.status_code == 200:
            figures.page_ms.append((time.perf_counter() - started) * 1000)
        elif page is not None:
            figures.errors.append(f"page answered {page.status_code}")


@dataclass
class LiveTrace:
    trace_id: str
    lines: list[tuple[bytes, int | None]]
    posted_at: dict[int, float] = field(default_factory=dict)
    sent: int = 0
    done: bool = False


async def sender(web: Web, number: int, live: LiveTrace, rate: int, figures: Figures) -> None:
    """Lines at `rate` per second, one batch in flight, resent at its offset on failure."""
    start = time.perf_counter()
    while live.sent < len(live.lines):
        now = time.perf_counter()
        due = min(len(live.lines), int((now - start) * rate) + 1)
        if due <= live.sent:
            await asyncio.sleep(max(0.0, start + live.sent / rate - now))
            continue
        batch = live.lines[live.sent : due]
        posted = time.perf_counter()
        for _, index in batch:
            if index is not None:
                live.posted_at.setdefault(index, posted)
        body = b"".join(line + b"\n" for line, _ in batch)
        path = f"/api/traces/{live.trace_id}/lines?offset={live.sent}"
        reply = await web.request("POST", path, number, body)
        if reply is None:
            await asyncio.sleep(0.5)  # every retry failed: try the batch again, bounded by time
            if time.perf_counter() - start > 3 * len(live.lines) / rate + 30:
                return
            continue
        if reply.status_code == 409 and "expected" in reply.json():
            live.sent = reply.json()["expected"]  # the batch landed before its answer was lost
            continue
        if reply.status_code != 200:
            figures.errors.append(f"lines answered {reply.status_code}: {reply.text[:200]}")
            return
        live.sent = reply.json()["total"]
    live.done = True


@dataclass
class View:
    """What one viewer holds: the last seq of its unbroken run, when each call arrived,
    whether it saw the trace closed and caught up after that."""

    last: int = 0
    calls: dict[int, float] = field(default_factory=dict)
    closed: bool = False
    done_at: float | None = None


async def viewer(
    bases: list[str], number: int, live: LiveTrace, deadline: list[float], view: View,
    figures: Figures,
) -> None:  # fmt: skip
    """Follows the trace as the page does until it is closed and caught up (or time is up),
    reconnecting with `?after=` after a dropped socket or a failed attempt, with the page's
    backoff (`reconnect_delay`). A refused connection (a dead process) is tried on the
    other process at once, as a load balancer would. `deadline[0]` moves: VIEW_SECONDS
    after the last line."""
    attempt = 0  # which process: the next one after each socket or failed attempt
    failures = 0  # attempts failed since the last socket that opened (the page's `attempts`)
    opened = 0
    refused = 0  # in a row: every process refusing waits like any failed attempt
    while view.done_at is None and time.monotonic() < deadline[0]:
        base = bases[(number + attempt) % len(bases)]
        url = f"{base.replace('http', 'ws')}/ws/traces/{live.trace_id}/?after={view.last}"
        attempt += 1
        started = time.perf_counter()
        try:
            # A browser waits long for a handshake (daphne gives up on one after its
            # connect timeout, 5 s by default, and closes it).
            socket_ = await connect(url, timeout=60)
        except ConnectionRefusedError:  # the dead process: the other, at once
            figures.handshakes_failed["refused"] = figures.handshakes_failed.get("refused", 0) + 1
            refused += 1
            if refused % len(bases) == 0:
                await asyncio.sleep(reconnect_delay(failures))
                failures += 1
            continue
        except (TimeoutError, OSError, EOFError) as exc:  # EOFError: closed in the handshake
            why = "timed out" if isinstance(exc, TimeoutError) else type(exc).__name__
            figures.handshakes_failed[why] = figures.handshakes_failed.get(why, 0) + 1
            refused = 0
            await asyncio.sleep(reconnect_delay(failures))
            failures += 1
            continue
        failures = refused = 0
        opened += 1
        if opened > 1:
            figures.viewer_reconnects += 1
            figures.handshake_ms.append((time.perf_counter() - started) * 1000)
        try:
            await follow(socket_, view, deadline, figures)
        except (OSError, EOFError):  # the process died mid-frame or mid-send: reconnect
            pass
        finally:
            with contextlib.suppress(OSError):
                await socket_.close()
        if view.done_at is None:
            await asyncio.sleep(reconnect_delay(0))


PONG_PREFIX = '{"type": "pong"'
"""How a pong starts (the consumer's send_json), unlike events (orjson, no spaces)."""


def event_head(line: str) -> tuple[str, int]:
    """(type, seq) of an event line `{"type":"…","seq":N,…}`, read without parsing the
    rest: the load client shares the cores with the servers, and most lines need no more."""
    kind_end = line.index('"', 9)
    seq_start = kind_end + 8  # past `","seq":`
    return line[9:kind_end], int(line[seq_start : line.index(",", seq_start)])


async def follow(socket_, view: View, deadline: list[float], figures: Figures) -> None:
    """One connection of a viewer, until it closes, the view is done or time is up."""
    receiving: asyncio.Task | None = None  # never cancelled mid-frame while reading
    pinged = time.monotonic()
    asked = -1  # the seq a resume is outstanding for
    try:
        while view.done_at is None and time.monotonic() < deadline[0]:
            if time.monotonic() - pinged >= PING_SECONDS:
                await socket_.send_json({"type": "ping", "seq": view.last})
                figures.pings += 1
                pinged = time.monotonic()
            receiving = receiving or asyncio.ensure_future(socket_.recv())
            done, _ = await asyncio.wait({receiving}, timeout=1.0)
            if not done:
                continue
            text, receiving = receiving.result(), None
            if text is None:
                break
            arrived = time.perf_counter()
            for line in text.splitlines():
                if line.startswith(PONG_PREFIX):
                    message = json.loads(line)
                    asked = -1
                    if message["last"] > view.last:
                        await socket_.send_json({"type": "resume", "after": view.last})
                        asked = view.last
                    elif view.closed:
                        view.done_at = time.monotonic()  # the final catch-up
                    continue
                kind, seq = event_head(line)
                if seq <= view.last:
                    figures.repeated += 1
                    continue
                if seq > view.last + 1:  # a hole: ask for it, keep the order
                    if asked != view.last:
                        await socket_.send_json({"type": "resume", "after": view.last})
                        figures.gaps_asked += 1
                        asked = view.last
                    break
                view.last = seq
                if kind == "call":
                    view.calls.setdefault(orjson.loads(line)["data"]["index"], arrived)
                elif kind == "state" and orjson.loads(line)["data"]["state"] != "live":
                    view.closed = True  # the final catch-up: a resume always reads
                    await socket_.send_json({"type": "resume", "after": view.last})
    finally:
        if receiving is not None:
            receiving.cancel()


async def live_baseline(web: Web, bases: list[str], calls: int = 10) -> float:
    """p95 POST -> viewer of one call, one live trace with one viewer and nothing else."""
    reply = await web.request("POST", "/api/traces?live=1&name=live-baseline", 0, b"")
    if reply is None or reply.status_code != 201:
        raise RuntimeError("could not create the baseline live trace")
    trace_id = reply.json()["id"]
    lines = agent_log(4 * calls + 4)
    socket_ = await connect(f"{bases[0].replace('http', 'ws')}/ws/traces/{trace_id}/")
    timings = []
    sent = 0
    try:
        for end in range(len(lines) + 1):
            completes = lines[end - 1][1] if end else None
            if completes is None:
                continue
            body = b"".join(line + b"\n" for line, _ in lines[sent:end])
            posted = time.perf_counter()
            await web.request("POST", f"/api/traces/{trace_id}/lines?offset={sent}", 0, body)
            sent = end
            while True:
                text = await asyncio.wait_for(socket_.recv(), 30)
                if text is None:
                    raise RuntimeError("the baseline viewer was closed")
                if any(
                    line.startswith(CALL_PREFIX) and json.loads(line)["data"]["index"] == completes
                    for line in text.splitlines()
                ):
                    break
            timings.append((time.perf_counter() - posted) * 1000)
    finally:
        await socket_.close()
    await web.request("POST", f"/api/traces/{trace_id}/close", 0)
    return percentile(timings, 0.95)


def stored_events() -> dict[str, tuple[int, int]]:
    """(last seq, calls) of each live trace's stored events, read from the database."""
    import psycopg

    query = (
        "SELECT trace_id, max(seq), count(*) FILTER (WHERE type = 'call') "
        "FROM traces_liveevent GROUP BY trace_id"
    )
    url = f"postgresql://postgres@{HOST}:5432/{DATABASE}"
    with psycopg.connect(url, autocommit=True) as db:
        return {str(row[0]): (row[1], row[2]) for row in db.execute(query).fetchall()}


async def watch_connections(figures: Figures, stop: asyncio.Event) -> None:
    """The peak of PostgreSQL connections to the bench database, sampled every second."""
    import psycopg

    url = f"postgresql://postgres@{HOST}:5432/postgres"
    query = "SELECT count(*) FROM pg_stat_activity WHERE datname = %s"

    def sample() -> int:
        with psycopg.connect(url, autocommit=True) as db:
            return db.execute(query, (DATABASE,)).fetchone()[0]

    while not stop.is_set():
        with contextlib.suppress(Exception):  # the server may be full: try again next second
            count = await asyncio.to_thread(sample)
            figures.connections_peak = max(figures.connections_peak, count)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1.0)


def server_errors(folder: Path) -> list[tuple[int, str]]:
    """Exceptions the processes logged (their last traceback line), most frequent first."""
    counts: dict[str, int] = {}
    for log in folder.glob("*.log"):
        for line in log.read_text(errors="replace").splitlines():
            head = line.split(":", 1)[0]
            if head.endswith(("Error", "Exception")) and " " not in head:
                counts[line[:160]] = counts.get(line[:160], 0) + 1
    return sorted(((n, text) for text, n in counts.items()), reverse=True)


async def page_baseline(web: Web, trace_id: str, repeat: int = 20) -> float:
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        await web.request("GET", f"/traces/{trace_id}/", 0)
        timings.append((time.perf_counter() - started) * 1000)
    return percentile(timings, 0.95)


async def run_load(args, processes: Processes, bases: list[str], figures: Figures) -> dict:
    web = Web(bases, figures)
    upload_body = b"".join(line + b"\n" for line, _ in agent_log(200))
    large_body = b"".join(line + b"\n" for line, _ in agent_log(600))
    assert len(upload_body) < BACKGROUND_BYTES < len(large_body)
    first = await web.request(
        "POST", "/api/traces?format=loop-inspector&name=baseline", 0, upload_body
    )
    if first is None or first.status_code != 201:
        raise RuntimeError(f"baseline upload failed: {first and first.text[:300]}")
    baseline_p95 = await page_baseline(web, first.json()["id"])
    live_baseline_p95 = await live_baseline(web, bases)

    lives = []
    for number in range(args.live):
        reply = await web.request(
            "POST", f"/api/traces?live=1&name=live-{number}&format=loop-inspector", number, b""
        )
        if reply is None or reply.status_code != 201:
            raise RuntimeError("could not create a live trace")
        lives.append(LiveTrace(reply.json()["id"], agent_log(int(args.rate * args.seconds))))
    expected = [sum(1 for _, index in live.lines if index is not None) for live in lives]

    stop_watching = asyncio.Event()
    watcher = asyncio.create_task(watch_connections(figures, stop_watching))
    started = time.monotonic()
    until = started + args.seconds
    view_until = [until + 4 * args.seconds + 180]  # brought forward once the senders end
    views = [View() for _ in range(args.viewers)]
    viewers = [
        asyncio.create_task(viewer(bases, n, lives[n % len(lives)], view_until, views[n], figures))
        for n in range(args.viewers)
    ]
    await asyncio.sleep(1.0)  # sockets open before the first line
    senders = [
        asyncio.create_task(sender(web, n, live, args.rate, figures))
        for n, live in enumerate(lives)
    ]
    uploaders = [
        asyncio.create_task(uploader(web, n, (upload_body, large_body), until, figures))
        for n in range(args.uploads)
    ]
    killed = []
    if args.faults:
        await asyncio.sleep(args.seconds / 2)
        processes.kill("worker-1")
        processes.kill("web-1")
        web.dead.add(bases[0])
        killed = ["worker-1", "web-1"]
        print(f"  t={time.monotonic() - started:.1f} s: SIGKILL worker-1 and web-1 ({bases[0]})")
    await asyncio.wait_for(asyncio.gather(*uploaders), args.seconds + 120)
    await asyncio.wait_for(asyncio.gather(*senders), 4 * args.seconds + 120)
    sending_done = time.monotonic()
    view_until[0] = sending_done + VIEW_SECONDS  # time to deliver the last calls

    for n, live in enumerate(lives):
        figures.lines_sent += len(live.lines)
        reply = await web.request("POST", f"/api/traces/{live.trace_id}/close", n)
        if reply is None or reply.status_code != 200:
            figures.incomplete.append(f"{live.trace_id}: close failed")
            continue
        closed = reply.json()
        figures.lines_stored += closed["total"]
        figures.calls_expected += expected[n]
        if not live.done or closed["total"] != len(live.lines) or closed["calls"] != expected[n]:
            figures.incomplete.append(
                f"{live.trace_id}: {closed['total']}/{len(live.lines)} lines, "
                f"{closed['calls']}/{expected[n]} calls, state {closed['state']}"
            )
    closed_at = time.monotonic()
    await asyncio.wait_for(asyncio.gather(*viewers), VIEW_SECONDS + 60)
    stored = await asyncio.to_thread(stored_events)
    for n, view in enumerate(views):
        live = lives[n % len(lives)]
        last_seq, stored_calls = stored.get(live.trace_id, (0, 0))
        if view.last != last_seq or len(view.calls) != stored_calls:
            figures.viewers_behind += 1
        figures.events_missing += max(0, last_seq - view.last)
        if view.done_at is not None:
            figures.converge_s.append(view.done_at - closed_at)
        for index in range(1, expected[n % len(lives)] + 1):
            if index in view.calls and index in live.posted_at:
                figures.live_ms.append((view.calls[index] - live.posted_at[index]) * 1000)
            else:
                figures.calls_missing += 1
    for trace_id in figures.upload_ids:
        reply = await web.request("GET", f"/api/traces/{trace_id}", 0)
        if reply is None or reply.status_code != 200:
            figures.incomplete.append(f"upload {trace_id}: {reply and reply.status_code}")
    await web.client.aclose()
    stop_watching.set()
    await watcher
    return {
        "baseline_p95": baseline_p95,
        "live_baseline_p95": live_baseline_p95,
        "killed": killed,
        "drain": sending_done - until,
    }


def start_servers(processes: Processes, folder: Path, web_count: int = 2, workers: int = 2):
    moto_port, *web_ports = free_ports(1 + web_count)
    processes.start(
        "moto",
        [sys.executable, "-m", "moto.server", "-H", HOST, "-p", str(moto_port)],
        {**os.environ, **CREDENTIALS},
    )
    processes.wait_port("moto", moto_port)
    endpoint = f"http://{HOST}:{moto_port}"
    bucket = f"load-bench-{uuid.uuid4().hex[:8]}"
    import boto3

    boto3.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="testing", aws_secret_access_key="testing",
    ).create_bucket(Bucket=bucket)  # fmt: skip
    env = server_env(
        DATABASE_URL=f"postgres://postgres@{HOST}:5432/{DATABASE}",
        REDIS_URL=f"redis://{HOST}:6379/{REDIS_DB}",
        INSPECTOR_QUEUE="redis",
        INSPECTOR_QUEUE_NAME="load-bench",
        INSPECTOR_DATA_DIR=str(folder / "data"),
        INSPECTOR_S3_BUCKET=bucket,
        INSPECTOR_S3_ENDPOINT_URL=endpoint,
        INSPECTOR_S3_REGION="us-east-1",
        **CREDENTIALS,
    )
    (folder / "load_bench_settings.py").write_text(
        "from inspector.settings import *  # noqa: F403\n"
        f"INSPECTOR = {{'BACKGROUND_UPLOAD_BYTES': {BACKGROUND_BYTES}}}\n"
    )
    env["DJANGO_SETTINGS_MODULE"] = "load_bench_settings"
    env["PYTHONPATH"] = os.pathsep.join([str(folder), str(ROOT), env.get("PYTHONPATH", "")])
    migrate(env)
    bases = []
    for n, port in enumerate(web_ports, start=1):
        processes.start(
            f"web-{n}",
            [
                sys.executable,
                "-m",
                "daphne",
                "-b",
                HOST,
                "-p",
                str(port),
                "inspector.asgi:application",
            ],
            env,
        )
        bases.append(f"http://{HOST}:{port}")
    for n in range(1, workers + 1):
        processes.start(
            f"worker-{n}",
            [sys.executable, "manage.py", "run_huey", "--workers", "2", "--worker-type", "thread"],
            env,
        )
    for n, port in enumerate(web_ports, start=1):
        processes.wait_port(f"web-{n}", port)
    return bases, endpoint


def report(args, figures: Figures, extra: dict) -> None:
    page_p95, base_p95 = percentile(figures.page_ms, 0.95), extra["baseline_p95"]
    live = [percentile(figures.live_ms, q) for q in (0.5, 0.95)]
    live_base = extra["live_baseline_p95"]
    converged = percentile(figures.converge_s, 0.95)
    converged_max = max(figures.converge_s, default=float("nan"))
    lost = figures.lines_sent - figures.lines_stored
    rows = [
        ("uploads done", f"{figures.uploads} ({figures.uploads / args.seconds:.1f}/s)"),
        ("", f"of which {figures.background} by a worker (202 and a job)"),
        ("background jobs lost", f"{figures.jobs_lost} (re-uploaded by the client)"),
        ("errors", f"{len(figures.errors)} (target 0; requests retried: {figures.retried})"),
        *[("", error) for error in figures.errors[:10]],
        ("lines sent / stored", f"{figures.lines_sent} / {figures.lines_stored}"),
        ("lines lost", f"{lost} (target 0)"),
        ("traces incomplete", f"{len(figures.incomplete)} (target 0)"),
        *[("", problem) for problem in figures.incomplete[:10]],
        ("p95 page time", f"{page_p95:.0f} ms under load"),
        ("", f"baseline before the load {base_p95:.0f} ms: x{page_p95 / base_p95:.1f}"),
        ("live latency", f"p50 {live[0]:.0f} ms, p95 {live[1]:.0f} ms (POST -> viewer)"),
        ("", f"baseline before the load {live_base:.0f} ms: x{live[1] / live_base:.1f}"),
        ("viewer deliveries", f"{len(figures.live_ms)} calls, missing {figures.calls_missing}"),
        ("", f"events missing {figures.events_missing} (target 0: final seq vs stored)"),
        ("", f"viewers not equal to the stored trace {figures.viewers_behind} (target 0)"),
        (
            "",
            f"repeated {figures.repeated}, holes asked for {figures.gaps_asked}, "
            f"pings {figures.pings}",
        ),
        ("", f"caught up after close: p95 {converged:.1f} s, last {converged_max:.1f} s"),
        ("viewer reconnects", str(figures.viewer_reconnects)),
        (
            "",
            f"their handshakes: p50 {percentile(figures.handshake_ms, 0.5):.0f} ms, "
            f"p95 {percentile(figures.handshake_ms, 0.95):.0f} ms, "
            f"max {max(figures.handshake_ms, default=float('nan')):.0f} ms "
            "(daphne drops one unfinished after 5 s)",
        ),
        (
            "",
            "attempts that did not open: "
            + (
                ", ".join(f"{n} {why}" for why, n in sorted(figures.handshakes_failed.items()))
                or "none"
            ),
        ),
        ("PostgreSQL peak", f"{figures.connections_peak} connections to {DATABASE}"),
        ("killed mid-run", ", ".join(extra["killed"]) + " (SIGKILL)" if extra["killed"] else "-"),
        ("senders finished", f"{extra['drain']:+.1f} s after the load window"),
    ]
    print()
    for label, value in rows:
        print(f"{label:<22}{value}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="10 uploads, 5 live at 20/s, 40 viewers, 15 s"
    )
    parser.add_argument("--uploads", type=int, default=50)
    parser.add_argument("--live", type=int, default=20)
    parser.add_argument("--rate", type=int, default=50, help="lines per second per live trace")
    parser.add_argument("--viewers", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--no-faults", dest="faults", action="store_false")
    args = parser.parse_args()
    if args.quick:
        args.uploads, args.live, args.rate, args.viewers, args.seconds = 10, 5, 20, 40, 15.0
    print(
        f"{args.uploads} concurrent uploads, {args.live} live traces at {args.rate} lines/s, "
        f"{args.viewers} viewers, {args.seconds:g} s; 2 daphne + 2 run_huey on PostgreSQL, "
        f"Redis db {REDIS_DB}, moto S3"
    )
    flush_redis()
    admin_database(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
    admin_database(f"CREATE DATABASE {DATABASE}")
    figures = Figures()
    folder = Path(tempfile.mkdtemp(prefix="load-bench-"))
    processes = Processes(folder)
    try:
        bases, _ = start_servers(processes, folder)
        print(f"web {', '.join(bases)}; logs in {folder}")
        extra = asyncio.run(run_load(args, processes, bases, figures))
    finally:
        processes.stop_all()
        with contextlib.suppress(Exception):
            admin_database(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        with contextlib.suppress(Exception):
            flush_redis()
    report(args, figures, extra)
    if figures.errors or figures.incomplete or figures.viewers_behind:
        for count, text in server_errors(folder)[:6]:
            print(f"{count:>6} x logged: {text}")
        print(f"\nthe processes' logs are kept in {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)
    return (
        0
        if not figures.errors
        and not figures.incomplete
        and figures.lines_sent == figures.lines_stored
        and not figures.calls_missing
        and not figures.viewers_behind
        else 1
    )


if __name__ == "__main__":
    sys.exit(main())
