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
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from ...coerce import dict_or_empty
from ...model import Message
from ..dialects import gemini
from ..dialects.base import Dialect
from ._index import gemini as scoring
from ._index.gemini import ENDPOINT
from .base import Detection
from .registry import register
from .request_log import RecordedCall, RequestLogAdapter


@register
class GeminiAdapter(RequestLogAdapter):
    name = "gemini"
    label = "Google Gemini / Vertex AI generateContent log"
    where = (
        "A VCR cassette or HTTP log of generateContent / streamGenerateContent traffic "
        "(generativelanguage.googleapis.com or Vertex AI's aiplatform.googleapis.com), as "
        "pydantic-ai, google-genai and LangChain test suites record it, or your own code "
        "that logs each request and response as one JSON line."
    )
    dialect: ClassVar[Dialect] = gemini
    normalize = staticmethod(gemini.normalize_content)
    mapped_request_keys = frozenset(
        {"contents", "systemInstruction", "system_instruction", "tools"}
    )
    not_a_record = "not a Gemini record (no 'request', 'response' or candidates[].content)"
    reads_nock = False
    tool_pairing = "name-order"

    @classmethod
    def normalizer_for(cls, messages: Sequence[Any]) -> Callable[[Any], Message]:
        return _in_context(list(messages))

    @classmethod
    def recognise(cls, value: Any) -> Detection | None:
        return scoring.recognise(value)

    @staticmethod
    def is_model_request(url: str, body: Any) -> bool:
        """A model turn: the generateContent endpoints, or (behind a proxy) a body with
        contents; countTokens and embedContent carry contents too but are not turns."""
        if ENDPOINT.search(url):
            return True
        if OTHER_METHOD.search(url):
            return False
        return isinstance(body, dict) and isinstance(body.get("contents"), (list, dict))

    @staticmethod
    def is_response(value: Any) -> bool:
        return gemini.candidate_content(value) is not None

    def transcript(self, body: dict[str, Any]) -> Sequence[Any] | str:
        contents = body.get("contents", [])
        if isinstance(contents, dict):  # a single Content is accepted by the API
            contents = [contents]
        if not isinstance(contents, list):
            return "request 'contents' is not a list"
        return contents

    def system(self, call: RecordedCall) -> Any:
        return gemini.system_of(call.body)

    def tools(self, body: dict[str, Any]) -> list[Any]:
        return gemini.tools_of(body)

    def model(self, call: RecordedCall) -> str | None:
        version = call.reply_body.get("modelVersion")
        if isinstance(version, str):
            return version
        match = ENDPOINT.search(call.sent.url)
        return match.group(1) if match else None

    def extra(self, call: RecordedCall) -> dict[str, Any]:
        extra = {
            **super().extra(call),
            "tool_pairing": "by function name and order within the turn (Gemini calls carry no id)",
        }
        reply = call.reply_body
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
        usage = dict_or_empty(reply.get("usageMetadata"))
        if usage.get("thoughtsTokenCount"):
            extra["thoughts_tokens"] = usage["thoughtsTokenCount"]
        if call.outcome.streamed:
            extra["streamed"] = True
        return extra


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
