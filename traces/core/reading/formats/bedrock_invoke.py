"""AWS Bedrock InvokeModel / InvokeModelWithResponseStream logs of Anthropic models.

What Claude Code and the Anthropic SDK's `AnthropicBedrock` client send on Bedrock:
`POST /model/<model id>/invoke` (or `/invoke-with-response-stream`) with an Anthropic
Messages request (`anthropic_version: "bedrock-2023-05-31"`, no `model`: the model id
is the URL's, URL-encoded, an inference-profile ARN or `us.anthropic.claude-…`). The
records are HTTP pairs as the recording proxy writes them (the streamed answer kept as
`body_base64`, AWS's event stream) or as cassettes hold them; `dialects.bedrock_invoke`
reads the bodies as Anthropic's.

InvokeModel takes any model family's own body (Titan's `inputText`, Llama's `prompt`,
Nova's and Mistral's `messages` in shapes of their own): those are not Messages calls and
are reported as unread lines, with why, not guessed at; the recorded file keeps them whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from ...model import LineError
from ..dialects import bedrock, bedrock_invoke
from ..dialects.base import Dialect
from ._index import bedrock_invoke as scoring
from ._index.bedrock_invoke import ENDPOINT, _is_enveloped_messages
from .base import AdapterEvent, Detection
from .http_record import read_request
from .registry import register
from .request_log import RecordedCall, RequestLogAdapter


@register
class BedrockInvokeAdapter(RequestLogAdapter):
    name = "bedrock-invoke"
    label = "AWS Bedrock InvokeModel log (Anthropic models)"
    where = (
        "Recorded by the proxy (`record --forward`, or the `/proxy/s/<session>/bedrock/"
        "<region>/` route) from Claude Code or the Anthropic SDK's AnthropicBedrock client, "
        "or a VCR cassette / HTTP log of bedrock-runtime `/model/<id>/invoke` and "
        "`/invoke-with-response-stream` calls with Anthropic Messages bodies."
    )
    dialect: ClassVar[Dialect] = bedrock_invoke
    normalize = staticmethod(bedrock_invoke.normalize_message)
    mapped_request_keys = frozenset({"messages", "system", "tools"})
    not_a_record = "not a Bedrock InvokeModel record (no 'request' or 'response')"
    reads_nock = False

    @classmethod
    def recognise(cls, value: Any) -> Detection | None:
        return scoring.recognise(value)

    @staticmethod
    def is_model_request(url: str, body: Any) -> bool:
        return bool(ENDPOINT.search(url.split("?")[0])) or _is_enveloped_messages(body)

    def pair(
        self, line: int, value: dict[str, Any], request: Any, response: Any
    ) -> Iterator[AdapterEvent]:
        """A Messages call as Anthropic's; another model family's body is an unread line."""
        sent = read_request(request)
        if isinstance(sent.body, dict) and not _is_anthropic(sent.body):
            yield LineError(line, _not_messages(sent.url, sent.body))
            return
        yield from super().pair(line, value, request, response)

    def model(self, call: RecordedCall) -> str | None:
        """The URL's model id (the body names none), else the one the answer names."""
        return bedrock.model_of_url(call.sent.url) or super().model(call)

    def extra(self, call: RecordedCall) -> dict[str, Any]:
        extra = super().extra(call)
        metrics = call.reply_body.get(bedrock_invoke.METRICS_KEY)
        if metrics is not None:
            extra["invocation_metrics"] = metrics
        # Streamed means event frames; a text stream is a mangled body (the call failed).
        if call.outcome.streamed and call.outcome.read.stream_text is None:
            extra["streamed"] = True
        return extra


def _is_anthropic(body: dict[str, Any]) -> bool:
    """A Claude body: `messages` and the `anthropic_version` Bedrock requires of one.
    Nova's and Mistral's bodies have `messages` too, in their own shapes: unread."""
    return isinstance(body.get("messages"), list) and isinstance(body.get("anthropic_version"), str)


def _not_messages(url: str, body: dict[str, Any]) -> str:
    """Why an InvokeModel body is not read: whose it looks like, and what it holds."""
    model = bedrock.model_of_url(url) or "a model"
    keys = ", ".join(sorted(map(str, body))[:6]) or "nothing"
    return (
        f"an InvokeModel call to {model} whose body is not an Anthropic Messages request "
        f"(it holds {keys}): only Anthropic models' InvokeModel calls are read; the "
        "recorded line is kept as it was."
    )
