"""AWS Bedrock Converse / ConverseStream request logs, any model family on Bedrock.

Shapes read: HTTP pairs from VCR cassettes (pydantic-ai, openllmetry and LangChain-AWS
test suites record them) and logging proxies, `{"request": BODY, "response": BODY}`
lines, and response-only records (a Converse response `{output, stopReason, usage}`).
A ConverseStream response is the binary AWS event stream; `records` decodes its frames
(with botocore's parser), and `dialects.bedrock` folds the events into one response.
Boto3-style event lists (`[{"contentBlockDelta": {...}}, ...]`) are read the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from ..dialects import bedrock
from ..dialects.base import Dialect
from ._index import bedrock_converse as scoring
from ._index.bedrock_converse import _is_converse_request, _is_converse_response
from .base import Detection
from .registry import register
from .request_log import RecordedCall, RequestLogAdapter


@register
class BedrockConverseAdapter(RequestLogAdapter):
    name = "bedrock-converse"
    label = "AWS Bedrock Converse / ConverseStream log"
    where = (
        "A VCR cassette or HTTP log of bedrock-runtime `/model/<id>/converse` and "
        "`/converse-stream` traffic (boto3 with vcrpy, as pydantic-ai, openllmetry and "
        "LangChain-AWS tests record it), or your own code that logs each Converse request "
        "and response as one JSON line."
    )
    dialect: ClassVar[Dialect] = bedrock
    normalize = staticmethod(bedrock.normalize_message)
    mapped_request_keys = frozenset({"messages", "system", "toolConfig"})
    not_a_record = "not a Bedrock Converse record (no 'request', 'response' or output.message)"
    reads_nock = False

    @classmethod
    def recognise(cls, value: Any) -> Detection | None:
        return scoring.recognise(value)

    @staticmethod
    def is_model_request(url: str, body: Any) -> bool:
        return _is_converse_request(url, body)

    @staticmethod
    def is_response(value: Any) -> bool:
        return _is_converse_response(value)

    def transcript(self, body: dict[str, Any]) -> Sequence[Any] | str:
        messages = body.get("messages", [])
        if not isinstance(messages, list):
            return "request 'messages' is not a list"
        return messages

    def system(self, call: RecordedCall) -> Any:
        return bedrock.system_of(call.body)

    def tools(self, body: dict[str, Any]) -> list[Any]:
        return bedrock.tools_of(body)

    def model(self, call: RecordedCall) -> str | None:
        return bedrock.model_of_url(call.sent.url) or _str(call.body.get("modelId"))

    def extra(self, call: RecordedCall) -> dict[str, Any]:
        extra = super().extra(call)
        config = call.body.get("toolConfig")
        if isinstance(config, dict) and config.get("toolChoice") is not None:
            extra["tool_choice"] = config["toolChoice"]
        reply = call.reply_body
        for key in ("metrics", "additionalModelResponseFields", "trace"):
            if reply.get(key) is not None:
                extra[key] = reply[key]
        # Streamed means event frames; a text stream is a mangled body (the call failed).
        if call.outcome.streamed and call.outcome.read.stream_text is None:
            extra["streamed"] = True
        return extra


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
