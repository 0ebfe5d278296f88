"""AWS Bedrock Converse / ConverseStream request logs, any model family on Bedrock.

Shapes read: HTTP pairs from VCR cassettes (pydantic-ai, openllmetry and LangChain-AWS
test suites record them) and logging proxies, `{"request": BODY, "response": BODY}`
lines, and response-only records (a Converse response `{output, stopReason, usage}`).
A ConverseStream response is the binary AWS event stream; `records` decodes its frames
(with botocore's parser), and `dialects.bedrock` folds the events into one response.
Boto3-style event lists (`[{"contentBlockDelta": {...}}, ...]`) are read the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from ..dialects import bedrock
from ..http_traffic import TrafficReader
from ..model import Exchange, LineError
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

MAPPED_REQUEST_KEYS = {"messages", "system", "toolConfig"}
ENDPOINT = re.compile(r"/model/[^/]+/converse(-stream)?(\?|$)")


@register
class BedrockConverseAdapter(Adapter):
    name = "bedrock-converse"
    label = "AWS Bedrock Converse / ConverseStream log"
    where = (
        "A VCR cassette or HTTP log of bedrock-runtime `/model/<id>/converse` and "
        "`/converse-stream` traffic (boto3 with vcrpy, as pydantic-ai, openllmetry and "
        "LangChain-AWS tests record it), or your own code that logs each Converse request "
        "and response as one JSON line."
    )
    normalize = staticmethod(bedrock.normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._traffic = TrafficReader(_is_converse_request)

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
        elif _is_converse_response(value):
            yield from self._pair(record.line, {}, None, value)
        else:
            yield LineError(
                record.line,
                "not a Bedrock Converse record (no 'request', 'response' or output.message)",
            )

    def _pair(
        self, line: int, value: dict[str, Any], request: Any, response: Any
    ) -> Iterator[AdapterEvent]:
        sent = read_request(request)
        if request is not None and not isinstance(sent.body, dict):
            yield LineError(line, "the request body is not a JSON object")
            return
        body = sent.body if isinstance(sent.body, dict) else {}
        messages = body.get("messages", [])
        if not isinstance(messages, list):
            yield LineError(line, "request 'messages' is not a list")
            return
        read = read_http_response(response)
        streamed = bedrock.is_event_list(read.body)
        if streamed:
            read.body, read.problem = bedrock.assemble_events(read.body)
        outcome = settle_outcome(read, _no_text_stream, bedrock.error_text)
        yield self._exchange(line, value, request, sent, body, messages, outcome, streamed)

    def _exchange(
        self,
        line: int,
        value: dict[str, Any],
        request: Any,
        sent: RequestRead,
        body: dict[str, Any],
        messages: list[Any],
        outcome: Outcome,
        streamed: bool,
    ) -> Exchange:
        reply_body = outcome.body if isinstance(outcome.body, dict) else None
        reply = bedrock.read_response(reply_body) if reply_body else None
        return Exchange(
            line=line,
            messages=messages,
            normalize=self.normalize,
            system=bedrock.system_of(body),
            tools=bedrock.tools_of(body),
            model=bedrock.model_of_url(sent.url) or _str(body.get("modelId")),
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
            extra=_extra(value, body, sent, outcome, streamed),
        )


def _no_text_stream(text: str) -> tuple[None, str]:
    """ConverseStream is binary: a text stream here means the body was mangled."""
    return None, "the response is text, not a Bedrock event stream"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _is_converse_request(url: str, body: Any) -> bool:
    if ENDPOINT.search(url.split("?")[0] + "?"):
        return True
    return (
        isinstance(body, dict)
        and isinstance(body.get("messages"), list)
        and ("toolConfig" in body or "inferenceConfig" in body)
    )


def _is_converse_response(value: Any) -> bool:
    output = value.get("output") if isinstance(value, dict) else None
    return isinstance(output, dict) and isinstance(output.get("message"), dict)


def _recognise(value: Any) -> Detection | None:
    if not isinstance(value, dict):
        return None
    url = request_url(value)
    path = url.split("?")[0]
    match = ENDPOINT.search(path + "?")
    if match:
        kind = "ConverseStream" if match.group(1) else "Converse"
        return Detection(0.95, f"request URL calls the Bedrock {kind} endpoint")
    if url:
        return None
    if _is_converse_response(value) and "stopReason" in value:
        return Detection(0.85, "a Bedrock Converse response (output.message, stopReason)")
    request = value.get("request")
    body = read_request(request).body if isinstance(request, dict) else None
    if isinstance(body, dict) and _is_converse_request("", body):
        return Detection(0.7, "request has Converse 'messages' with toolConfig/inferenceConfig")
    return None


def _extra(
    value: dict[str, Any],
    body: dict[str, Any],
    sent: RequestRead,
    outcome: Outcome,
    streamed: bool,
) -> dict[str, Any]:
    extra: dict[str, Any] = {
        "request": {k: v for k, v in body.items() if k not in MAPPED_REQUEST_KEYS},
        **sent.meta,
        **outcome.read.meta,
        **other_keys(value),
    }
    config = body.get("toolConfig")
    if isinstance(config, dict) and config.get("toolChoice") is not None:
        extra["tool_choice"] = config["toolChoice"]
    reply = outcome.body if isinstance(outcome.body, dict) else {}
    for key in ("metrics", "additionalModelResponseFields", "trace"):
        if reply.get(key) is not None:
            extra[key] = reply[key]
    if streamed:
        extra["streamed"] = True
    return extra
