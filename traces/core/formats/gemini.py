"""Google Gemini and Vertex AI `generateContent` / `streamGenerateContent` request logs.

Shapes read: HTTP pairs from VCR cassettes (pydantic-ai, google-genai and LangChain test
suites record them) and logging proxies, `{"request": BODY, "response": BODY}` lines, and
response-only records (a `GenerateContentResponse`). Streams arrive as `?alt=sse` text
(Gemini API) or a JSON array of chunks (Vertex without `alt=sse`); both are joined.

Function calls carry no id, so tool results pair by name and order within the turn (see
`dialects.gemini`); every tool run says so. Thought signatures are kept on their parts
and counted in the call's other fields.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from ..dialects import gemini
from ..http_traffic import TrafficReader
from ..model import Exchange, LineError, Message
from ..records import Record
from ..timeparse import to_epoch_seconds
from .base import Adapter, AdapterEvent, Detection
from .openai_chat import (
    Outcome,
    RequestRead,
    other_keys,
    read_http_response,
    read_request,
    request_url,
    settle_outcome,
)
from .registry import register

MAPPED_REQUEST_KEYS = {"contents", "systemInstruction", "system_instruction", "tools"}
ENDPOINT = re.compile(r"models/([^/:?]+):(stream)?[gG]enerateContent")


@register
class GeminiAdapter(Adapter):
    name = "gemini"
    label = "Google Gemini / Vertex AI generateContent log"
    where = (
        "A VCR cassette or HTTP log of generateContent / streamGenerateContent traffic "
        "(generativelanguage.googleapis.com or Vertex AI's aiplatform.googleapis.com), as "
        "pydantic-ai, google-genai and LangChain test suites record it, or your own code "
        "that logs each request and response as one JSON line."
    )
    normalize = staticmethod(gemini.normalize_content)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._traffic = TrafficReader(_is_gemini_request)

    @classmethod
    def normalizer_for(cls, messages: Sequence[Any]) -> Callable[[Any], Message]:
        return _in_context(list(messages))

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        best: Detection | None = None
        for value in values:
            claim = _recognise(value)
            if claim is not None and (best is None or claim.score > best.score):
                best = claim
        return best

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        if not isinstance(value, dict):
            yield LineError(record.line, "expected a JSON object with request and response")
        elif (traffic := self._traffic.read(record.line, value)) is not None:
            yield traffic
        elif "request" in value or "response" in value:
            yield from self._pair(record.line, value, value.get("request"), value.get("response"))
        elif gemini.candidate_content(value) is not None:
            yield from self._pair(record.line, {}, None, value)
        else:
            yield LineError(
                record.line,
                "not a Gemini record (no 'request', 'response' or candidates[].content)",
            )

    def _pair(
        self, line: int, value: dict[str, Any], request: Any, response: Any
    ) -> Iterator[AdapterEvent]:
        sent = read_request(request)
        if request is not None and not isinstance(sent.body, dict):
            yield LineError(line, "the request body is not a JSON object")
            return
        body = sent.body if isinstance(sent.body, dict) else {}
        contents = body.get("contents", [])
        if isinstance(contents, dict):  # a single Content is accepted by the API
            contents = [contents]
        if not isinstance(contents, list):
            yield LineError(line, "request 'contents' is not a list")
            return
        read = read_http_response(response)
        streamed = False
        if isinstance(read.body, list) and gemini.error_text(read.body) is None:
            read.body, read.problem = gemini.assemble_chunks(read.body)
            streamed = True
        outcome = settle_outcome(read, gemini.assemble_stream, gemini.error_text)
        if streamed:
            outcome = replace(outcome, streamed=True)
        yield self._exchange(line, value, request, sent, body, contents, outcome)

    def _exchange(
        self,
        line: int,
        value: dict[str, Any],
        request: Any,
        sent: RequestRead,
        body: dict[str, Any],
        contents: list[Any],
        outcome: Outcome,
    ) -> Exchange:
        reply_body = outcome.body if isinstance(outcome.body, dict) else None
        reply = gemini.read_response(reply_body, len(contents), contents) if reply_body else None
        return Exchange(
            line=line,
            messages=contents,
            normalize=_in_context(contents),
            system=gemini.system_of(body),
            tools=gemini.tools_of(body),
            model=_model(sent.url, reply_body),
            response=reply.message if reply else None,
            response_raw=outcome.body if outcome.body is not None else outcome.failed_body,
            stop_reason=reply.stop_reason if reply else None,
            usage=reply.usage if reply else None,
            started_at=to_epoch_seconds(sent.timestamp or value.get("started_at")),
            ended_at=to_epoch_seconds(outcome.read.timestamp or value.get("ended_at")),
            status="error" if outcome.error else "ok",
            http_status=outcome.read.http_status,
            error=outcome.error,
            request_recorded=request is not None,
            extra=_extra(value, body, sent, outcome),
            tool_pairing="name-order",
        )


def _in_context(contents: list[Any]) -> Callable[[Any], Message]:
    """A normaliser that knows where each message sits in this request, so the ids it
    gives function calls and responses follow the name-and-order rule. A response body
    (with `candidates`) is the turn after the request's contents."""
    positions = {id(content): index for index, content in enumerate(contents)}

    def normalize(raw: Any) -> Message:
        position = positions.get(id(raw))
        if position is not None:
            return gemini.normalize_at(raw, position, contents)
        if isinstance(raw, dict) and "candidates" in raw:
            content = gemini.candidate_content(raw) or {"role": "model", "parts": []}
            return gemini.normalize_at(content, len(contents), contents)
        return gemini.normalize_content(raw)

    return normalize


OTHER_METHOD = re.compile(r"models/[^/:?]+:(?!(stream)?[gG]enerateContent)\w+")


def _is_gemini_request(url: str, body: Any) -> bool:
    """A model turn: the generateContent endpoints, or (behind a proxy) a body with
    contents; countTokens and embedContent carry contents too but are not turns."""
    if ENDPOINT.search(url):
        return True
    if OTHER_METHOD.search(url):
        return False
    return isinstance(body, dict) and isinstance(body.get("contents"), (list, dict))


def _recognise(value: Any) -> Detection | None:
    if not isinstance(value, dict):
        return None
    url = request_url(value)
    match = ENDPOINT.search(url)
    if match:
        kind = "streamGenerateContent" if match.group(2) else "generateContent"
        return Detection(0.95, f"request URL calls the Gemini {kind} endpoint")
    if url:
        return None
    request = value.get("request")
    body = read_request(request).body if isinstance(request, dict) else None
    contents = body.get("contents") if isinstance(body, dict) else None
    if isinstance(contents, list) and any(
        isinstance(c, dict) and isinstance(c.get("parts"), list) for c in contents
    ):
        return Detection(0.85, "request has Gemini 'contents' with 'parts'")
    if gemini.candidate_content(value) is not None and "usageMetadata" in value:
        return Detection(0.85, "a Gemini response (candidates[].content, usageMetadata)")
    return None


def _model(url: str, reply: dict[str, Any] | None) -> str | None:
    if reply and isinstance(reply.get("modelVersion"), str):
        return reply["modelVersion"]
    match = ENDPOINT.search(url)
    return match.group(1) if match else None


def _extra(
    value: dict[str, Any], body: dict[str, Any], sent: RequestRead, outcome: Outcome
) -> dict[str, Any]:
    extra: dict[str, Any] = {
        "request": {k: v for k, v in body.items() if k not in MAPPED_REQUEST_KEYS},
        **sent.meta,
        **outcome.read.meta,
        **other_keys(value),
        "tool_pairing": "by function name and order within the turn (Gemini calls carry no id)",
    }
    reply = outcome.body if isinstance(outcome.body, dict) else {}
    for key in ("responseId", "modelVersion", "promptFeedback"):
        if reply.get(key) is not None:
            extra[key] = reply[key]
    finish = gemini.finish_reason_of(reply)
    if finish is not None:
        extra["finish_reason"] = finish
    content = gemini.candidate_content(reply) or {}
    signatures = sum(
        1
        for part in content.get("parts", [])
        if isinstance(part, dict) and "thoughtSignature" in part
    )
    if signatures:
        extra["thought_signatures"] = signatures
    usage = reply.get("usageMetadata") if isinstance(reply.get("usageMetadata"), dict) else {}
    if usage.get("thoughtsTokenCount"):
        extra["thoughts_tokens"] = usage["thoughtsTokenCount"]
    if outcome.streamed:
        extra["streamed"] = True
    return extra
