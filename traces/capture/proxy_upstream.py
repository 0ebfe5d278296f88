"""The recording proxy's upstream side: one call sent on, its answer relayed and recorded.

`traces.capture.proxy` decides what to send (`plan_call`, a `Plan`); this module sends it
through one pooled httpx transport per event loop, answers failures as the vendor would
(`vendor_error`), and yields the upstream's bytes as they arrive while keeping the copy
that is recorded however the exchange ends. Both the Django view (`proxy.relay`) and the
ASGI fast path (traces.capture.proxy_asgi) relay through here.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
from django.conf import settings
from django.http import JsonResponse

from traces.capture.recording import ExchangeRecording
from traces.capture.vendor_errors import vendor_json
from traces.conf import inspector_settings
from traces.core.reading.capture import (
    HOP_BY_HOP,
    TIMEOUT,
    UPSTREAM_BROKE_OFF,
    UPSTREAM_UNREACHABLE,
    is_streamed,
    sse_error_event,
)
from traces.stores import store

DROP_RESPONSE_HEADERS = HOP_BY_HOP | {"content-length"}


@dataclass
class Plan:
    """One call to send on: where, with what, and its recording (None: passed through)."""

    vendor: str
    method: str
    url: str
    headers: dict[str, str]
    body: bytes
    recording: ExchangeRecording | None


async def open_upstream(plan: Plan) -> httpx.Response | JsonResponse:
    """The upstream's answer, its body not read yet; or the vendor-shaped error when it
    could not be reached (recorded as a failed call)."""
    recording = plan.recording
    transport, timeouts = _transport()
    # The header bytes as the client sent them (Django and the fast path read them as
    # Latin-1): httpx would refuse any value that is not ASCII text.
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in plan.headers.items()]
    try:
        outgoing = httpx.Request(
            plan.method,
            _parsed_url(plan.url),
            headers=headers,
            content=plan.body,
            extensions={"timeout": timeouts},
        )
    except (httpx.InvalidURL, ValueError) as exc:  # UnicodeError is a ValueError
        return failed_call(
            recording,
            plan.vendor,
            400,
            f"the request cannot be forwarded ({exc})",
            UPSTREAM_UNREACHABLE,
            "invalid_request_error",
        )
    try:
        upstream = await transport.handle_async_request(outgoing)
    except asyncio.CancelledError:  # the client left before the upstream answered
        if recording is not None:
            recording.client_left("the client disconnected before the answer")
        raise
    except httpx.TimeoutException as exc:
        setting = (
            "PROXY_CONNECT_TIMEOUT"
            if isinstance(exc, httpx.ConnectTimeout)
            else "PROXY_READ_TIMEOUT"
        )
        seconds = inspector_settings()[setting]
        return failed_call(
            recording, plan.vendor, 504, f"the upstream did not answer within {seconds} s", TIMEOUT
        )
    except httpx.HTTPError as exc:
        return failed_call(
            recording,
            plan.vendor,
            502,
            f"could not reach the upstream ({exc.__class__.__name__})",
            UPSTREAM_UNREACHABLE,
        )
    if recording is not None:
        note_answer(recording, upstream.status_code, dict(upstream.headers))
    return upstream


def note_answer(recording: ExchangeRecording, status: int, headers: dict[str, str]) -> None:
    """The upstream's answer began: its status and headers (lowercase names, as httpx
    gives them) go in the copy. The forward proxy's hand-over (`forwarded`) too."""
    recording.exchange.status = status
    recording.exchange.response_headers = headers
    recording.exchange.streamed = is_streamed(headers.get("content-type", ""))


def passed_headers(upstream: httpx.Response) -> list[tuple[str, str]]:
    """The upstream's response headers the client gets (Content-Type apart), and the
    header that keeps any proxy in front from buffering an event stream."""
    found = [
        (key, value)
        for key, value in upstream.headers.multi_items()
        if key.lower() not in DROP_RESPONSE_HEADERS and key.lower() != "content-type"
    ]
    if is_streamed(upstream.headers.get("content-type", "")):
        found.append(("X-Accel-Buffering", "no"))
    return found


def vendor_error(vendor: str, status: int, kind: str, message: str) -> JsonResponse:
    """An error in the shape the vendor's SDK reads, so the agent shows our message."""
    return vendor_json(vendor, status, kind, message)


def failed_call(
    recording: ExchangeRecording | None,
    vendor: str,
    status: int,
    problem: str,
    outcome: str,
    kind: str = "api_error",
) -> JsonResponse:
    """The call could not be made (the upstream out of reach, a request no HTTP client
    can send): answer as the vendor would, record the call as failed."""
    response = vendor_error(vendor, status, kind, problem)
    if recording is not None:
        exchange = recording.exchange
        exchange.status = status
        exchange.response_headers = {"content-type": "application/json"}
        exchange.response_body = response.content
        recording.finish(problem=problem, outcome=outcome)
    return response


async def relay_body(
    upstream: httpx.Response, recording: ExchangeRecording | None, vendor: str, streamed: bool
) -> AsyncIterator[bytes]:
    """The upstream's bytes as they arrive; the exchange is recorded however it ends.

    A client that goes away while this waits for the upstream cancels it here; one that
    goes away while its chunk is being sent cancels the request's task instead, which
    the done-callback notices.
    """
    task = asyncio.current_task()
    if recording is not None and task is not None:
        task.add_done_callback(recording.on_task_done)
    try:
        async for chunk in upstream.aiter_raw():
            if recording is not None:
                recording.keep(chunk)
            yield chunk
    except asyncio.CancelledError:
        if recording is not None:
            recording.client_left("the client disconnected mid-response")
        raise
    except httpx.HTTPError as exc:
        if isinstance(exc, httpx.TimeoutException):
            seconds = inspector_settings()["PROXY_READ_TIMEOUT"]
            problem = f"the upstream sent nothing for {seconds} s (read timeout)"
            outcome = TIMEOUT
        else:
            problem = f"the upstream connection failed mid-response ({exc})"
            outcome = UPSTREAM_BROKE_OFF
        if recording is not None:
            recording.finish(problem=problem, outcome=outcome)
        if streamed:
            # ASGI cannot drop the client's connection: an error event, as the vendor
            # sends one mid-stream, tells its SDK that the stream did not complete.
            yield sse_error_event(vendor, f"Loop Inspector proxy: {problem}")
    finally:
        if recording is not None:
            recording.finish()
        await upstream.aclose()


# -- the HTTP transport ---------------------------------------------------------------------
class UpstreamClients:
    """The pooled upstream transport of each event loop, with its timeouts (`_transport`)."""

    def __init__(self) -> None:
        self.by_loop: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[httpx.AsyncHTTPTransport, dict[str, float]]
        ] = weakref.WeakKeyDictionary()

    def clear(self) -> None:
        """Forget the transports (each goes with its loop's last reference)."""
        self.by_loop.clear()


def _trusted_roots() -> ssl.SSLContext | bool:
    """The public roots, plus INSPECTOR_UPSTREAM_CA_BUNDLE's when it names a file."""
    extra = str(getattr(settings, "INSPECTOR_UPSTREAM_CA_BUNDLE", "") or "")
    if not extra:
        return True
    import certifi

    context = ssl.create_default_context(cafile=certifi.where())
    context.load_verify_locations(cafile=extra)
    return context


@functools.lru_cache(maxsize=256)
def _url_of(url: str) -> httpx.URL:
    return httpx.URL(url)


def _parsed_url(url: str) -> httpx.URL:
    """The upstream URL parsed once per distinct address (parsing it is a third of what
    building the request costs); one with a query (Gemini's may hold `?key=`) is parsed
    each time, so no credential is kept past its call."""
    return httpx.URL(url) if "?" in url else _url_of(url)


def _transport() -> tuple[httpx.AsyncHTTPTransport, dict[str, float]]:
    """One connection pool per event loop (daphne runs one), used as a transport: the
    proxy sends a request it built itself, so none of `httpx.AsyncClient`'s layers
    (auth, redirects, cookies, default headers, its per-request log line, which names
    the URL) run, nor its per-chunk stream wrapper. It adds nothing of its own to a call:
    no cookie is kept (a transport has no jar: one the upstream sets goes to the caller
    that got it, in the response's headers, and never rides on another caller's next
    call), and no `User-Agent` or `Accept` of httpx's, so the upstream sees the caller's
    headers."""
    loop = asyncio.get_running_loop()
    transports = store(UpstreamClients).by_loop
    found = transports.get(loop)
    if found is None:
        timeouts = httpx.Timeout(
            connect=float(inspector_settings()["PROXY_CONNECT_TIMEOUT"]),
            read=float(inspector_settings()["PROXY_READ_TIMEOUT"]),
            write=60.0,
            pool=60.0,
        ).as_dict()
        transport = httpx.AsyncHTTPTransport(
            verify=_trusted_roots(),
            trust_env=False,
            limits=httpx.Limits(max_connections=1000, max_keepalive_connections=100),
        )
        found = transports[loop] = (transport, timeouts)
    return found
