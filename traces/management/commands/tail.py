"""Follow a JSONL log as an agent appends to it, into a live trace (like `tail -F`)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from traces import live
from traces.core.reading.limits import InputRejected
from traces.live.follow import FileFollower
from traces.live.remote_tail import RemoteError, RemoteTrace


class Command(BaseCommand):
    help = (
        "Follow a JSONL log while an agent appends to it (surviving truncation and "
        "rotation) into a live trace; Ctrl-C closes the trace."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--format", dest="format_name", default=None)
        parser.add_argument("--name", default="")
        start = parser.add_mutually_exclusive_group()
        start.add_argument(
            "--from-start",
            dest="from_end",
            action="store_false",
            help="read the lines already in the file first (the default)",
        )
        start.add_argument(
            "--from-end",
            dest="from_end",
            action="store_true",
            help="only lines appended from now on",
        )
        parser.set_defaults(from_end=False)
        parser.add_argument(
            "--idle-exit",
            type=float,
            default=None,
            metavar="SECONDS",
            help="stop and close the trace after this long without a new line",
        )
        parser.add_argument("--poll", type=float, default=0.2, metavar="SECONDS")
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument(
            "--server",
            default="",
            metavar="URL",
            help="send the lines to this running server over its HTTP API (no database "
            "access needed here), e.g. http://inspector.local:8000",
        )
        parser.add_argument(
            "--token",
            default=os.environ.get("LOOP_INSPECTOR_TOKEN") or None,
            help="API token for --server (default: $LOOP_INSPECTOR_TOKEN)",
        )

    def handle(
        self, *args, file, format_name, name, from_end, idle_exit, poll, base_url, server,
        token, **_,
    ):  # fmt: skip
        if server:
            self._remote(server, token, file, format_name, name, from_end, idle_exit, poll)
            return
        try:
            trace = live.create_live_trace(
                name=name or file.name, format_name=format_name, filename=file.name
            )
        except InputRejected as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{base_url.rstrip('/')}/traces/{trace.pk}/  following {file}")
        follower = FileFollower(file, from_end=from_end)
        self._sent = 0
        problem = None
        try:
            problem = self._follow(trace.pk, follower, idle_exit, poll)
        except KeyboardInterrupt:
            pass
        finally:
            if problem is None:
                problem = self._send(trace.pk, follower.rest())
            follower.close()
            closed = live.close_live_trace(trace_id=trace.pk)
        self.stdout.write(
            f"closed: {closed.lines_total} lines, {closed.calls_count} calls, "
            f"{closed.flags_count} findings"
            + (
                f", {follower.restarts} restart(s) after truncation or rotation"
                if follower.restarts
                else ""
            )
        )
        if problem:
            raise CommandError(problem)

    def _remote(self, server, token, file, format_name, name, from_end, idle_exit, poll) -> None:
        """Follow the file into a live trace on `server`, by the HTTP API."""
        try:
            remote = RemoteTrace(
                server,
                token=token,
                name=name or file.name,
                format_name=format_name,
                say=lambda text: self.stderr.write(text),
            )
        except RemoteError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{remote.url}  following {file}")
        follower = FileFollower(file, from_end=from_end)
        problem = None
        try:
            last_line_at = time.monotonic()
            while True:
                lines = follower.read_lines()
                if lines:
                    remote.send(lines)
                    last_line_at = time.monotonic()
                    continue
                if idle_exit is not None and time.monotonic() - last_line_at >= idle_exit:
                    break
                time.sleep(poll)
        except KeyboardInterrupt:
            pass
        except RemoteError as exc:
            problem = str(exc)
        finally:
            follower_rest = follower.rest()
            follower.close()
        try:
            if problem is None:
                remote.send(follower_rest)
            closed = remote.close()
        except RemoteError as exc:
            raise CommandError(problem or str(exc)) from exc
        self.stdout.write(
            f"closed: {closed['total']} lines, {closed['calls']} calls, "
            f"{closed['findings']} findings"
        )
        if problem:
            raise CommandError(problem)

    def _follow(self, trace_id, follower: FileFollower, idle_exit, poll) -> str | None:
        last_line_at = time.monotonic()
        while True:
            lines = follower.read_lines()
            if lines:
                problem = self._send(trace_id, lines)
                if problem:
                    return problem
                last_line_at = time.monotonic()
                continue
            if idle_exit is not None and time.monotonic() - last_line_at >= idle_exit:
                return None
            time.sleep(poll)

    def _send(self, trace_id, lines: list[bytes]) -> str | None:
        """Append through the same service as the HTTP API; a reason to stop, or None."""
        if not lines:
            return None
        try:
            result = live.append_lines(trace_id=trace_id, offset=self._sent, lines=lines)
        except (InputRejected, live.LiveError) as exc:
            return str(exc)
        self._sent = result.total
        return None
