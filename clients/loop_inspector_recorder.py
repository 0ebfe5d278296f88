"""Record an agent loop in Loop Inspector's event format, to a file and/or a live trace.

Standard library only: copy this file into your project. Each model request, response
and tool start/end becomes one `loop-inspector/events/v1` JSON line (see
docs/event-format.md). With `path`, lines are appended and flushed to that file (follow
it with `manage.py tail FILE`); with `url` (a Loop Inspector server, e.g.
`http://127.0.0.1:8000`), a live trace is created and lines are sent to it in batches by
a background thread, so the agent never waits for the server:

    recorder = EventRecorder("agent-events.jsonl", url="http://127.0.0.1:8000", agent="bot")
    print("watch it live:", recorder.trace_url)
    call_id = recorder.request(body)           # just before the model call
    recorder.response(call_id, body=reply)     # when it returns (or error=... on failure)
    recorder.tool_start(tool_id, "search")     # around each tool your code runs
    recorder.tool_end(tool_id, "search", is_error=False)
    recorder.close()                           # sends what is left and closes the trace

Sending is at-least-once and never duplicates: each batch says how many lines were
acknowledged before it (`?offset=N`); after a failure (timeout, dropped connection,
server restart) the same lines are sent again from the acknowledged offset with
exponential backoff, and the server stores only the lines it did not have. A 409 reply
names the offset the server expects, and sending resumes from there. The server being
down never breaks the agent: lines wait in memory (up to `max_pending_lines`) and the
file, if any, has them all.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from datetime import datetime, timezone

FORMAT = "loop-inspector/events/v1"


class EventRecorder:
    """Appends one JSON line per event; safe to share between threads."""

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        provider: str = "anthropic",
        agent: str | None = None,
        *,
        url: str | None = None,
        name: str | None = None,
        batch_lines: int = 200,
        flush_interval: float = 0.2,
        timeout: float = 10.0,
        max_pending_lines: int = 100_000,
        token: str | None = None,
    ) -> None:
        if path is None and url is None:
            raise ValueError("give a file path, a server url, or both")
        self.provider = provider
        self._lock = threading.Lock()
        self._file = open(path, "a", encoding="utf-8") if path else None  # noqa: SIM115
        self._live = None
        if url:
            self._live = LiveSender(
                url,
                name=name or agent or "agent loop",
                batch_lines=batch_lines,
                flush_interval=flush_interval,
                timeout=timeout,
                max_pending_lines=max_pending_lines,
                token=token,
            )
        meta = {"type": "meta", "format": FORMAT, "provider": provider}
        if agent:
            meta["agent"] = agent
        self._write(meta)

    @property
    def trace_url(self):
        """The live trace's page (None without a server, or before it could be created)."""
        return self._live.trace_url if self._live else None

    @property
    def trace_id(self):
        return self._live.trace_id if self._live else None

    def request(
        self,
        body: dict,
        call_id: str | None = None,
        loop_id: str | None = None,
        loop_label: str | None = None,
        parent_tool_call_id: str | None = None,
    ) -> str:
        """Log a request body just before sending it; returns the call id to respond to."""
        call_id = call_id or uuid.uuid4().hex
        event = {"type": "request", "call_id": call_id, "ts": _now(), "body": body}
        if loop_id:
            event["loop_id"] = loop_id
        if loop_label:
            event["loop_label"] = loop_label
        if parent_tool_call_id:
            event["parent_tool_call_id"] = parent_tool_call_id
        self._write(event)
        return call_id

    def response(
        self,
        call_id: str,
        body: dict | str | None = None,
        status: int | None = None,
        error: object = None,
    ) -> None:
        """Log what came back: a body (message, error body or SSE text) and/or an error."""
        event = {"type": "response", "call_id": call_id, "ts": _now()}
        if body is not None or error is None:
            event["body"] = body
        if status is not None:
            event["status"] = status
        if error is not None:
            event["error"] = str(error)
        self._write(event)

    def tool_start(self, tool_call_id: str, name: str | None = None) -> None:
        event = {"type": "tool_start", "tool_call_id": tool_call_id, "name": name, "ts": _now()}
        self._write(event)

    def tool_end(self, tool_call_id: str, name: str | None = None, is_error: bool = False) -> None:
        self._write(
            {
                "type": "tool_end",
                "tool_call_id": tool_call_id,
                "name": name,
                "ts": _now(),
                "is_error": bool(is_error),
            }
        )

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until the server acknowledged every line so far; whether it did."""
        return self._live.flush(timeout) if self._live else True

    def close(self, timeout: float = 10.0) -> None:
        """Send what is left, close the live trace, close the file."""
        if self._live:
            self._live.close(timeout)
        if self._file:
            self._file.close()
            self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def _write(self, event):
        line = json.dumps(event, ensure_ascii=False, default=str)
        with self._lock:
            if self._file:
                self._file.write(line + "\n")
                self._file.flush()
            if self._live:
                self._live.add(line)


class LiveSender:
    """Sends lines to a live trace in batches from a background thread, resending from the
    acknowledged offset after any failure."""

    def __init__(
        self,
        url,
        *,
        name="agent loop",
        batch_lines=200,
        flush_interval=0.2,
        timeout=10.0,
        max_pending_lines=100_000,
        format_name="loop-inspector",
        token=None,
    ):
        self.base_url = url.rstrip("/")
        # An API token of a shared server (sent as a bearer token); the environment's
        # LOOP_INSPECTOR_TOKEN when not given.
        self.token = token or os.environ.get("LOOP_INSPECTOR_TOKEN") or None
        self.name = name
        self.format_name = format_name
        self.batch_lines = batch_lines
        self.flush_interval = flush_interval
        self.timeout = timeout
        self.max_pending_lines = max_pending_lines
        self.trace_id = None
        self.trace_url = None
        self.acknowledged = 0
        """Lines the server has stored: the offset of `self._pending[0]`."""
        self.dropped = 0
        """Lines given up on (the buffer overflowed, or the trace was closed under us)."""
        self._pending = []
        self._cond = threading.Condition()
        self._closing = False
        self._stopped = False
        self._hurry = False
        self._failures = 0
        self._create()
        self._thread = threading.Thread(target=self._run, name="loop-inspector-sender", daemon=True)
        self._thread.start()
        atexit.register(self.flush, 5.0)

    # -- the agent's side -----------------------------------------------------------------
    def add(self, line):
        with self._cond:
            if self._stopped:
                return
            self._pending.append(line)
            if len(self._pending) > self.max_pending_lines:
                # Never grow without bound while the server is away; the file keeps all.
                del self._pending[0]
                self.dropped += 1
                self.acknowledged += 1
            if len(self._pending) in (1, self.batch_lines):
                self._cond.notify_all()

    def flush(self, timeout=10.0):
        """Send now and wait until every line so far is acknowledged; whether it was."""
        deadline = time.monotonic() + timeout
        with self._cond:
            self._hurry = True
            self._cond.notify_all()
            while self._pending and not self._stopped:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.1))
            return not self._pending

    def close(self, timeout=10.0):
        sent = self.flush(timeout)
        with self._cond:
            self._closing = True
            if not sent and self._pending:
                _warn(f"{len(self._pending)} line(s) could not be sent before closing")
                self._stopped = True
            self._cond.notify_all()
        self._thread.join(timeout)
        if self.trace_id is not None:
            try:
                self._post(f"/api/traces/{self.trace_id}/close", b"")
            except (OSError, ValueError) as exc:
                _warn(f"could not close live trace {self.trace_id}: {exc}")

    # -- the sending thread -----------------------------------------------------------------
    def _create(self):
        query = urllib.parse.urlencode({"name": self.name, "format": self.format_name})
        try:
            status, reply = self._post(f"/api/traces/live?{query}", b"")
        except (OSError, ValueError) as exc:
            _warn(f"no live trace yet ({exc}); will retry")
            return False
        if status != 201:
            _warn(f"the server refused a live trace: {reply.get('error', status)}")
            return False
        self.trace_id = reply["id"]
        self.trace_url = reply.get("url")
        return True

    def _run(self):
        while True:
            with self._cond:
                if self._failures:
                    self._cond.wait(min(10.0, 0.5 * 2 ** (self._failures - 1)))  # back off
                elif not self._pending and not self._closing:
                    self._cond.wait()  # until a line comes
                elif len(self._pending) < self.batch_lines and not (self._hurry or self._closing):
                    self._cond.wait(self.flush_interval)  # let a batch form
                if self._closing and (not self._pending or self._stopped):
                    return
                if self._stopped or not self._pending:
                    continue
                offset = self.acknowledged
                batch = self._pending[: self.batch_lines]
            if self.trace_id is None and not self._create():
                self._failures += 1
                continue
            self._send(offset, batch)

    def _send(self, offset, batch):
        body = ("\n".join(batch) + "\n").encode("utf-8")
        try:
            status, reply = self._post(f"/api/traces/{self.trace_id}/lines?offset={offset}", body)
        except (OSError, ValueError):
            self._failures += 1  # resent from the acknowledged offset after a pause
            return
        if status == 200:
            self._acknowledge(reply["total"])
        elif status == 409 and "expected" in reply:
            self._resume_from(reply["expected"])
        elif status == 409:
            _warn(f"live trace {self.trace_id} is {reply.get('state', 'closed')}: sending stops")
            self._stop()
        else:
            _warn(f"the server refused lines ({status}): {reply.get('error', '')}")
            self._failures += 1

    def _acknowledge(self, total):
        with self._cond:
            self._acknowledge_locked(total)
            self._cond.notify_all()

    def _resume_from(self, expected):
        """The server has `expected` lines: skip what it has, or resend what it lacks."""
        with self._cond:
            if expected < self.acknowledged:
                _warn(
                    f"the server lost lines {expected}..{self.acknowledged - 1} this recorder "
                    "no longer holds; sending stops (the file, if any, has them)"
                )
                self._stopped = True
                self._pending.clear()
            else:
                self._acknowledge_locked(expected)
            self._cond.notify_all()

    def _acknowledge_locked(self, total):
        done = max(0, min(total - self.acknowledged, len(self._pending)))
        del self._pending[:done]
        self.acknowledged += done
        self._failures = 0
        if not self._pending:
            self._hurry = False

    def _stop(self):
        with self._cond:
            self._stopped = True
            self.dropped += len(self._pending)
            self._pending.clear()
            self._cond.notify_all()

    def _headers(self):
        headers = {"Content-Type": "application/x-ndjson"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def _post(self, path, body):
        """POST; (status, JSON reply). Raises OSError when the server cannot be reached."""
        request = urllib.request.Request(
            self.base_url + path,
            data=body,
            method="POST",
            headers=self._headers(),
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:
                return reply.status, json.loads(reply.read() or b"{}")
        except urllib.error.HTTPError as error:
            try:
                return error.code, json.loads(error.read() or b"{}")
            except ValueError:
                return error.code, {}


def _warn(message):
    print(f"loop-inspector recorder: {message}", file=sys.stderr)


def _now():
    return datetime.now(timezone.utc).isoformat()  # noqa: UP017  (Python 3.8+ for copies)
