"""Tell recorded HTTP interactions that are not model calls from those that are, and read
the MCP and A2A JSON-RPC ones.

A cassette records everything a test's HTTP client sent: besides the model calls there are
MCP Streamable-HTTP posts (`initialize`, `tools/list`, `tools/call`), A2A posts to other
agents (the Agent2Agent protocol, a2a-protocol.org, JSON-RPC binding: `message/send`,
`message/stream`, `tasks/get`... and the agent card at `/.well-known/agent-card.json`),
SDKs exporting their own telemetry (OpenAI Agents' `/v1/traces/ingest`, Agno's
`/telemetry/runs`, OTLP), and token requests. Counted as model calls they would inflate
every figure and, with their non-JSON or 204 answers, show as API errors; dropped, a
reader would lose what the agent did. They become `HttpTraffic`: kept, shown, never billed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import orjson

from traces.core.patterns import lazy_compile

from ...coerce import dict_or_empty, str_or_none
from ...model import HttpTraffic
from ..credentials import mask_url
from ..sse import iter_events

TELEMETRY_PATHS = re.compile(
    r"(/traces/ingest|/telemetry/|/v1/(traces|metrics|logs)$|/api/public/(ingestion|otel)"
    r"|/otlp/|/ingest(/|$)|/collect(/|$)|/_bulk$)",
    re.IGNORECASE,
)
AUTH_PATHS = re.compile(r"(/oauth2?/|/token$|/o/oauth2/|/login$|/authorize$)", re.IGNORECASE)
AUTH_HOSTS = re.compile(r"^(sts\.|oauth2\.|login\.|metadata\.google\.internal)", re.IGNORECASE)
A2A_METHODS = lazy_compile(
    r"^(message/(send|stream)|agent/\w+"
    r"|tasks/(send|sendSubscribe|resubscribe|pushNotificationConfig/\w+))$"
)
"""A2A's own JSON-RPC methods (0.2 and 0.3 names, and 0.1's tasks/send*); no MCP method
has these names."""
SHARED_TASK_METHODS = ("tasks/get", "tasks/cancel", "tasks/list")
"""Names both protocols use (MCP since 2025-11-25): told apart by their params (MCP names
`taskId` or a `cursor`, A2A the task `id` or a `contextId`), else by the file's other traffic."""
A2A_FAILED_STATES = ("failed", "rejected")
AGENT_CARD_PATHS = re.compile(r"/\.well-known/agent(-card)?\.json$")

IsModel = Callable[[str, Any], bool]
"""An adapter's test: is a request to this URL with this body one of its model calls?"""


class TrafficReader:
    """Classifies one file's HTTP records; keeps the MCP session count across records
    (JSON-RPC ids restart with each session, so a session is told by its `initialize`)."""

    def __init__(self, is_model: IsModel) -> None:
        self.is_model = is_model
        self.mcp_sessions = 0
        self.a2a_seen = False

    def read(self, line: int, value: Any) -> HttpTraffic | None:
        """The record as other HTTP traffic, or None when it is (or may be) a model call."""
        request = value.get("request") if isinstance(value, dict) else None
        if not isinstance(request, dict):
            return None
        url = mask_url(str(request.get("url") or request.get("uri") or ""))
        if not url:
            return None
        body = _json(request.get("body"))
        response = dict_or_empty(value.get("response"))
        status = response.get("status_code", response.get("status"))
        status = status if isinstance(status, int) and not isinstance(status, bool) else None
        method = str_or_none(request.get("method"))
        if _is_jsonrpc(body):
            if self._is_a2a(body):
                return self._a2a(line, method, url, status, body, response)
            return self._mcp(line, method, url, status, body, response)
        path = urlsplit(url).path
        host = urlsplit(url).hostname or ""
        if AGENT_CARD_PATHS.search(path):
            summary = f"A2A agent card {host}" + (f" → {status}" if status else "")
            return HttpTraffic(line, "a2a", method, url, status, summary)
        if TELEMETRY_PATHS.search(path):
            kind = "telemetry"
        elif AUTH_PATHS.search(path) or AUTH_HOSTS.search(host):
            kind = "auth"
        elif self.is_model(url, body):
            return None
        else:
            kind = "other"
        summary = f"{method or 'HTTP'} {host}{path}" + (f" → {status}" if status else "")
        return HttpTraffic(line, kind, method, url, status, summary)

    def _is_a2a(self, body: Any) -> bool:
        """An A2A call (see `A2A_METHODS` and `SHARED_TASK_METHODS`); remembered, so an
        ambiguous call later in the file follows it."""
        message = body[0] if isinstance(body, list) and body else body
        rpc_method = str_or_none(message.get("method")) or ""
        if A2A_METHODS.match(rpc_method):
            found = True
        elif rpc_method not in SHARED_TASK_METHODS:
            return False
        else:
            params = dict_or_empty(message.get("params"))
            if "taskId" in params or "cursor" in params:
                return False
            by_params = "id" in params or "contextId" in params
            found = by_params or (self.a2a_seen and not self.mcp_sessions)
        self.a2a_seen = self.a2a_seen or found
        return found

    def _a2a(
        self,
        line: int,
        method: str | None,
        url: str,
        status: int | None,
        body: Any,
        response: dict[str, Any],
    ) -> HttpTraffic:
        """An A2A call to another agent: its method and what the answer says (the task's
        state, a direct message, or the JSON-RPC error). Not a tool run: A2A names no tool."""
        message = body[0] if isinstance(body, list) and body else body
        rpc_method = str_or_none(message.get("method"))
        rpc_id = message.get("id")
        answer, is_error = _a2a_answer(_replies(response), rpc_id)
        summary = f"A2A {rpc_method or 'JSON-RPC'}" + (f" → {answer}" if answer else "")
        return HttpTraffic(
            line=line,
            kind="a2a",
            method=method,
            url=url,
            status=status,
            summary=summary,
            rpc_method=rpc_method,
            rpc_id=rpc_id if isinstance(rpc_id, (int, str)) else None,
            is_error=is_error,
        )

    def _mcp(
        self,
        line: int,
        method: str | None,
        url: str,
        status: int | None,
        body: Any,
        response: dict[str, Any],
    ) -> HttpTraffic:
        message = body[0] if isinstance(body, list) and body else body
        message = message if isinstance(message, dict) else {}
        rpc_method = str_or_none(message.get("method"))
        if rpc_method == "initialize":
            self.mcp_sessions += 1
        rpc_id = message.get("id")
        given = message.get("params")
        params: dict[str, Any] = given if isinstance(given, dict) else {}
        summary = f"MCP {rpc_method or 'JSON-RPC'}"
        if isinstance(body, list):
            summary += f" (a batch of {len(body)})"
        tool_name = tool_input = result_text = is_error = None
        if rpc_method == "tools/call":
            tool_name = str_or_none(params.get("name"))
            tool_input = params.get("arguments")
            summary = f"MCP tools/call {tool_name or '?'}"
            result_text, is_error = _tool_result(_replies(response), rpc_id)
            if is_error:
                summary += " (isError)"
        return HttpTraffic(
            line=line,
            kind="mcp",
            method=method,
            url=url,
            status=status,
            summary=summary,
            rpc_method=rpc_method,
            rpc_id=rpc_id if isinstance(rpc_id, (int, str)) else None,
            session=self.mcp_sessions or None,
            tool_name=tool_name,
            tool_input=tool_input,
            result_text=result_text,
            is_error=is_error,
        )


def _json(body: Any) -> Any:
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            return body
    return body


def _is_jsonrpc(body: Any) -> bool:
    first = body[0] if isinstance(body, list) and body else body
    return isinstance(first, dict) and first.get("jsonrpc") == "2.0" and "method" in first


def _replies(response: dict[str, Any]) -> list[Any]:
    """JSON-RPC messages in a response: one JSON body, or the events of an SSE stream
    (which may carry log notifications before the result)."""
    body = response.get("body")
    if body is None:
        body = response.get("body_raw")
    if isinstance(body, str):
        if "data:" in body[:4096]:
            return [data for _, data in iter_events(body) if isinstance(data, dict)]
        body = _json(body)
    if isinstance(body, list):
        return [item for item in body if isinstance(item, dict)]
    return [body] if isinstance(body, dict) else []


def _a2a_answer(replies: list[Any], rpc_id: Any) -> tuple[str | None, bool | None]:
    """What the reply answering `rpc_id` says: a task's state (the last one a stream
    reported; `failed` and `rejected` are errors), `message` for a direct answer, or the
    JSON-RPC error's message."""
    said: str | None = None
    for reply in replies:
        if reply.get("id") != rpc_id:
            continue
        if isinstance(reply.get("error"), dict):
            return f"error: {reply['error'].get('message') or reply['error'].get('code')}", True
        result = dict_or_empty(reply.get("result"))
        state = dict_or_empty(result.get("status")).get("state")
        if isinstance(state, str):
            said = state
        elif result.get("kind") == "message" or "parts" in result:
            said = "message"
    if said is None:
        return None, None
    return said, said in A2A_FAILED_STATES


def _tool_result(replies: list[Any], rpc_id: Any) -> tuple[str | None, bool | None]:
    """The text and error flag of the reply answering `rpc_id` (a JSON-RPC `error` is an
    error too); (None, None) when the recording holds no answer."""
    for reply in replies:
        if reply.get("id") != rpc_id or ("result" not in reply and "error" not in reply):
            continue
        if isinstance(reply.get("error"), dict):
            error = reply["error"]
            return str(error.get("message") or error), True
        given = reply.get("result")
        result: dict[str, Any] = given if isinstance(given, dict) else {}
        content = result.get("content")
        parts: list[Any] = content if isinstance(content, list) else []
        texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
        if not texts and result.get("structuredContent") is not None:
            texts = [orjson.dumps(result["structuredContent"]).decode()]
        return "\n".join(texts), bool(result.get("isError"))
    return None, None
