"""Hands finished exchanges from mitmdump to Loop Inspector, off every client's path.

One thread posts them (`forward_exchange`'s bytes) over one kept-alive loopback
connection, in the order the exchanges ended, so the server stores a session's calls in
that order, as the reverse proxy does. A hand-over that fails is logged as an error
(mitmdump runs `--quiet`, which shows errors only) with what failed and the call's
vendor, never its URL, headers or body (nothing of a credential), and dropped: the
client had its answer already. A refusal (401, 403) turns the one-hop path off:
`on_refused` sends the next calls through the reverse proxy, which answers them as it
should. `close` waits for what is queued, so a stopping mitmdump loses no call.
Standard library only: mitmdump loads this beside its script.
"""

from __future__ import annotations

import http.client
import logging
import queue
import threading
from collections.abc import Callable
from urllib.parse import urlsplit

try:  # mitmdump's script loader has this folder on sys.path while the script loads
    from forward_exchange import CONTENT_TYPE  # type: ignore[import-not-found]
except ImportError:
    from traces.capture.forward_exchange import CONTENT_TYPE

PATH = "/api/forward/exchanges"
TOKEN_HEADER = "X-Loop-Inspector-Token"
TIMEOUT_SECONDS = 30.0

log = logging.getLogger(__name__)


class Handover:
    """The queue of exchanges to post and the thread posting them."""

    def __init__(self, server: str, token: str, on_refused: Callable[[], None]) -> None:
        parts = urlsplit(server)
        self.https = parts.scheme == "https"
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or (443 if self.https else 80)
        self.prefix = parts.path.rstrip("/")
        self.headers = {"Content-Type": CONTENT_TYPE}
        if token:
            self.headers[TOKEN_HEADER] = token
        self.on_refused = on_refused
        self.pending: queue.Queue[tuple[bytes, str] | None] = queue.Queue()
        self.thread: threading.Thread | None = None
        self.connection: http.client.HTTPConnection | None = None
        self.lock = threading.Lock()

    def send(self, data: bytes, vendor: str) -> None:
        """Queue one exchange (returns at once)."""
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(
                    target=self._run, name="loop-inspector-handover", daemon=True
                )
                self.thread.start()
        self.pending.put((data, vendor))

    def close(self, timeout: float) -> None:
        """Post what is queued (for `timeout` seconds at most), then stop."""
        with self.lock:
            thread, self.thread = self.thread, None
        if thread is not None:
            self.pending.put(None)
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            item = self.pending.get()
            if item is None:
                break
            data, vendor = item
            try:
                status = self._post(data)
            except (OSError, http.client.HTTPException) as exc:
                log.error(
                    "Loop Inspector did not get a call to %s to record: %s (%s)",
                    vendor,
                    exc.__class__.__name__,
                    _reason(exc),
                )
                continue
            if status in (401, 403):
                log.error(
                    "Loop Inspector refused a call to %s to record (HTTP %d): the next calls "
                    "go through its reverse proxy",
                    vendor,
                    status,
                )
                self.on_refused()
            elif status >= 300:
                log.error("Loop Inspector did not record a call to %s (HTTP %d)", vendor, status)
        if self.connection is not None:
            self.connection.close()

    def _post(self, data: bytes) -> int:
        """The server's status; a kept-alive connection the server closed is tried once
        more on a new one."""
        for attempt in (1, 2):
            if self.connection is None:
                kind = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
                self.connection = kind(self.host, self.port, timeout=TIMEOUT_SECONDS)
            try:
                self.connection.request("POST", self.prefix + PATH, body=data, headers=self.headers)
                response = self.connection.getresponse()
                response.read()
                if response.will_close:
                    self.connection.close()
                    self.connection = None
                return response.status
            except (OSError, http.client.HTTPException):
                self.connection.close()
                self.connection = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


def _reason(exc: BaseException) -> str:
    """The failure in a few words: an OS error's text (no address, no data of the call)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)[:200] or exc.__class__.__name__
