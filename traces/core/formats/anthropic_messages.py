"""Anthropic Messages API pair logs: one request/response pair per line.

Shapes read (all seen in the wild):
- `{"request": BODY, "response": BODY}`, the simplest logger's output;
- claude-trace: `{"request": {timestamp, method, url, headers, body},
  "response": {timestamp, status_code, headers, body | null, body_raw}, "logged_at"}`,
  with streamed responses left as raw server-sent events in `body_raw`;
- VCR cassettes (reshaped by `records`) and nock recordings `{status, headers, body}`
  that hold only a response.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import orjson

from ..credentials import mask_headers
from ..dialects import anthropic
from ..http_traffic import TrafficReader
from ..model import Exchange, LineError
from ..records import Record
from ..timeparse import to_epoch_seconds
from .base import Adapter, AdapterEvent, Detection
from .registry import register

MAPPED_REQUEST_KEYS = {"model", "messages", "system", "tools"}


@register
class AnthropicMessagesAdapter(Adapter):
    name = "anthropic-messages"
    label = "Anthropic Messages API request log"
    where = (
        "Written by claude-trace (`.claude-trace/log-*.jsonl`), by an HTTP logging proxy, "
        "or by your own code that logs each Messages API request and response as one line."
    )
    normalize = staticmethod(anthropic.normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._traffic = TrafficReader(_is_messages_request)

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        for value in values:
            reason = _recognise(value)
            if reason:
                return Detection(0.9, reason)
        return None

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        if not isinstance(value, dict):
            yield LineError(record.line, "expected a JSON object with request and response")
            return
        traffic = self._traffic.read(record.line, value)
        if traffic is not None:
            yield traffic
        elif "request" in value or "response" in value:
            yield from self._pair(record.line, value)
        elif "status" in value and "body" in value:
            yield from self._pair(record.line, {"response": _nock_response(value)})
        elif value.get("type") == "message":
            yield from self._pair(record.line, {"response": value})
        else:
            yield LineError(
                record.line, "not an Anthropic request/response pair (no 'request' or 'response')"
            )

    def _pair(self, line: int, value: dict[str, Any]) -> Iterator[AdapterEvent]:
        request = value.get("request")
        response = value.get("response")
        request_body, request_meta = _unwrap_request(request)
        if request is not None and not isinstance(request_body, dict):
            yield LineError(line, "the request body is not a JSON object")
            return
        request_body = request_body if isinstance(request_body, dict) else {}
        messages = request_body.get("messages")
        if messages is not None and not isinstance(messages, list):
            yield LineError(line, "request 'messages' is not a list")
            return
        tools = request_body.get("tools")
        outcome = _read_response(response)
        extra: dict[str, Any] = {
            "request": {k: v for k, v in request_body.items() if k not in MAPPED_REQUEST_KEYS},
            **request_meta,
            **outcome["meta"],
        }
        for key, item in value.items():
            if key not in ("request", "response"):
                extra[key] = item
        started = request_meta.get("timestamp") or value.get("started_at")
        ended = outcome["meta"].get("timestamp") or value.get("ended_at")
        body = outcome["message"]
        yield Exchange(
            line=line,
            messages=messages or [],
            normalize=self.normalize,
            system=request_body.get("system"),
            tools=tools if isinstance(tools, list) else [],
            model=_model(request_body, body),
            response=_response_message(body),
            response_raw=body if body is not None else outcome["raw_error"],
            stop_reason=body.get("stop_reason") if isinstance(body, dict) else None,
            usage=anthropic.usage_from(body.get("usage")) if isinstance(body, dict) else None,
            started_at=to_epoch_seconds(started),
            ended_at=to_epoch_seconds(ended),
            status="error" if outcome["error"] else "ok",
            http_status=outcome["http_status"],
            error=outcome["error"],
            request_recorded=request is not None,
            extra=extra,
        )


def _is_messages_request(url: str, body: Any) -> bool:
    """A Messages API call: its endpoint (token counting aside), or a body with messages."""
    path = url.split("?")[0]
    if path.endswith("/v1/messages") or "/v1/messages?" in url:
        return True
    if "/v1/messages/" in path:
        return False  # count_tokens, batches: not a model turn
    return isinstance(body, dict) and isinstance(body.get("messages"), list)


def _recognise(value: Any) -> str | None:
    """Why this record looks like an Anthropic pair, or None."""
    if not isinstance(value, dict):
        return None
    request = value.get("request")
    response = value.get("response")
    if isinstance(request, dict):
        url = str(request.get("url") or request.get("uri") or "")
        if "/v1/messages" in url:
            return f"request URL {url.split('?')[0]} is the Anthropic Messages endpoint"
        body = request.get("body") if isinstance(request.get("body"), dict) else request
        if isinstance(body.get("messages"), list) and _anthropic_response(response):
            return "request has 'messages' and the response is an Anthropic message"
    if "status" in value and isinstance(value.get("body"), str):
        text = value["body"]
        if '"type":"message"' in text.replace(" ", "") or "event: message_start" in text:
            return "a recorded HTTP response holding an Anthropic message"
    if value.get("type") == "message" and value.get("role") == "assistant":
        return "an Anthropic message object"
    return None


def _anthropic_response(response: Any) -> bool:
    if not isinstance(response, dict):
        return False
    body = response.get("body", response)
    if isinstance(body, dict) and body.get("type") in ("message", "error"):
        return True
    raw = response.get("body_raw")
    return isinstance(raw, str) and "message_start" in raw


def _unwrap_request(request: Any) -> tuple[Any, dict[str, Any]]:
    """(body, metadata) of a request that is either a bare body or an HTTP record."""
    if not isinstance(request, dict):
        return request, {}
    if "body" in request and ("url" in request or "method" in request or "headers" in request):
        body = request.get("body")
        if isinstance(body, str):
            with contextlib.suppress(orjson.JSONDecodeError):
                body = orjson.loads(body)
        meta = {k: v for k, v in request.items() if k != "body"}
        if isinstance(meta.get("headers"), dict):
            meta["headers"] = mask_headers(meta["headers"])
        return body, {"http_request": meta, "timestamp": request.get("timestamp")}
    return request, {}


def _read_response(response: Any) -> dict[str, Any]:
    """Message body, status and error of a response in any of the recorded shapes."""
    result: dict[str, Any] = {
        "message": None,
        "error": None,
        "http_status": None,
        "meta": {},
        "raw_error": None,
    }
    if response is None:
        result["error"] = "no response was recorded (the request failed or was cut off)"
        return result
    if not isinstance(response, dict):
        result["error"] = "the response is not a JSON object"
        return result
    is_http = "status_code" in response or "body_raw" in response or "headers" in response
    if is_http:
        status = response.get("status_code")
        result["http_status"] = status if isinstance(status, int) else None
        headers = response.get("headers")
        meta = {k: v for k, v in response.items() if k not in ("body", "body_raw")}
        if isinstance(headers, dict):
            meta["headers"] = mask_headers(headers)
        result["meta"] = {"http_response": meta}
        if response.get("timestamp") is not None:
            result["meta"]["timestamp"] = response.get("timestamp")
        body = response.get("body")
        raw = response.get("body_raw")
        if isinstance(body, str):
            try:
                body = orjson.loads(body)
            except orjson.JSONDecodeError:
                raw, body = body, None
        if body is None and isinstance(raw, str):
            if "event:" in raw or raw.lstrip().startswith("data:"):
                message, stream_error = anthropic.assemble_stream(raw)
                result["message"] = message
                result["error"] = stream_error
                result["meta"]["streamed"] = True
            else:
                try:
                    body = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    result["error"] = "the response body is not JSON"
                    result["raw_error"] = raw[:2000]
        if body is not None:
            result["message"] = body
    else:
        result["message"] = response
    body = result["message"]
    api_error = anthropic.error_text(body)
    if api_error:
        result["error"] = api_error
        result["raw_error"] = body
        result["message"] = None
    elif isinstance(result["http_status"], int) and result["http_status"] >= 400:
        result["error"] = result["error"] or f"HTTP {result['http_status']}"
        result["raw_error"] = body
        result["message"] = None
    elif body is not None and not isinstance(body, dict):
        result["error"] = "the response body is not a JSON object"
        result["message"] = None
    if isinstance(result["http_status"], int) and api_error:
        result["error"] = f"HTTP {result['http_status']} {api_error}"
    return result


def _nock_response(value: dict[str, Any]) -> dict[str, Any]:
    """A nock recording `{status, headers, body}` as an HTTP response record."""
    body = value.get("body")
    shaped: dict[str, Any] = {"status_code": value.get("status"), "headers": value.get("headers")}
    if isinstance(body, str) and ("event:" in body or body.lstrip().startswith("data:")):
        shaped["body"] = None
        shaped["body_raw"] = body
    else:
        shaped["body"] = body
    return shaped


def _response_message(body: Any):
    if not isinstance(body, dict):
        return None
    return anthropic.normalize_message({"role": body.get("role") or "assistant", **body})


def _model(request_body: dict[str, Any], body: Any) -> str | None:
    model = body.get("model") if isinstance(body, dict) else None
    model = model or request_body.get("model")
    return model if isinstance(model, str) else None
