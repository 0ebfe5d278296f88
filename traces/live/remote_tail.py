"""A live trace on another server, over the HTTP API: `manage.py tail --server URL`.

The agent's machine needs no database: lines go to `POST /api/traces/<id>/lines?offset=N`.
Lines not yet acknowledged are kept; after a connection error the client asks the server
how many lines it holds (`GET …/lines`) and resends from there, so a line is stored once
however often the connection drops.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx


class RemoteError(Exception):
    """The server refused the trace or its lines (not a connection problem)."""


class RemoteTrace:
    def __init__(
        self,
        server: str,
        *,
        token: str | None = None,
        name: str = "",
        format_name: str | None = None,
        retry_seconds: float = 1.0,
        give_up_after: float = 300.0,
        say: Callable[[str], None] = print,
    ) -> None:
        self.server = server.rstrip("/")
        # An API token (shared mode) rides on every request; never printed.
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.client = httpx.Client(timeout=30.0, trust_env=False, headers=headers)
        self.retry_seconds = retry_seconds
        self.give_up_after = give_up_after
        self.say = say
        params = {"name": name}
        if format_name:
            params["format"] = format_name
        created = self._request("POST", "/api/traces/live", params=params, expect=201)
        self.id: str = created["id"]
        self.url: str = created["url"]
        """The trace page as the server names it (its real address)."""
        self.acked = 0
        self.unacked: list[bytes] = []

    def send(self, lines: list[bytes]) -> None:
        """Queue the lines and send everything not yet acknowledged."""
        self.unacked.extend(lines)
        if not self.unacked:
            return
        deadline = time.monotonic() + self.give_up_after
        while self.unacked:
            try:
                reply = self.client.post(
                    f"{self.server}/api/traces/{self.id}/lines",
                    params={"offset": self.acked},
                    content=b"".join(line.rstrip(b"\n") + b"\n" for line in self.unacked),
                    headers={"Content-Type": "application/x-ndjson"},
                )
            except httpx.HTTPError as exc:
                self._wait(deadline, f"cannot reach {self.server} ({exc.__class__.__name__})")
                self._resync(deadline)
                continue
            if reply.status_code == 409 and "expected" in reply.json():
                self._rebase(int(reply.json()["expected"]))
                continue
            if reply.status_code != 200:
                raise RemoteError(_message(reply))
            total = int(reply.json()["total"])
            self._rebase(total)

    def _rebase(self, total: int) -> None:
        """The server holds `total` lines: drop those from the unacknowledged ones."""
        if total < self.acked:
            raise RemoteError(
                f"the server holds {total} lines of this trace, fewer than the {self.acked} "
                "it acknowledged: it lost lines"
            )
        stored = total - self.acked
        self.unacked = self.unacked[stored:]
        self.acked = total

    def _resync(self, deadline: float) -> None:
        while True:
            try:
                reply = self.client.get(f"{self.server}/api/traces/{self.id}/lines")
            except httpx.HTTPError:
                self._wait(deadline, "still cannot reach the server")
                continue
            if reply.status_code != 200:
                raise RemoteError(_message(reply))
            status = reply.json()
            if status.get("state") != "live":
                raise RemoteError(f"the trace is {status.get('state')}: it takes no more lines")
            self._rebase(int(status["total"]))
            return

    def _wait(self, deadline: float, why: str) -> None:
        if time.monotonic() > deadline:
            raise RemoteError(f"{why}; gave up after {self.give_up_after:.0f} s")
        self.say(f"{why}; retrying")
        time.sleep(self.retry_seconds)

    def close(self) -> dict:
        return self._request("POST", f"/api/traces/{self.id}/close", expect=200)

    def _request(self, method: str, path: str, *, expect: int, **kwargs) -> dict:
        try:
            reply = self.client.request(method, self.server + path, **kwargs)
        except httpx.HTTPError as exc:
            raise RemoteError(f"cannot reach {self.server}: {exc}") from exc
        if reply.status_code != expect:
            raise RemoteError(_message(reply))
        return reply.json()


def _message(reply: httpx.Response) -> str:
    try:
        return f"HTTP {reply.status_code}: {reply.json().get('error', reply.text[:200])}"
    except ValueError:
        return f"HTTP {reply.status_code}: {reply.text[:200]}"
