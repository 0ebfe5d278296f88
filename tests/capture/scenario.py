"""The fake upstream's script for the proxy tests and benchmark: which recorded corpus
response answers which request, plus errors chosen by the request's `model`."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.capture.fake_upstream import Reply, nock_reply, vcr_replies
from tests.capture.gemini_script import GeminiScript

ANTHROPIC = "anthropic_messages_api"
CHAT = "openai_chat_completions_api"
RESPONSES = "openai_responses_api"

SECRET = "sk-ant-api03-LOOPINSPECTORTESTSECRETdoNotStore0123456789"
OPENAI_SECRET = "sk-proj-LOOPINSPECTORTESTSECRETopenaiDoNotStore987654"


def ports():
    """Ports to bind: LOOP_INSPECTOR_TEST_PORTS="8200-8299" keeps a shared machine's
    engineers apart; otherwise any free port."""
    import os

    spec = os.environ.get("LOOP_INSPECTOR_TEST_PORTS", "")
    if not spec:
        return 0
    low, high = (int(x) for x in spec.split("-"))
    for port in range(low, high + 1):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    return 0


class Script:
    """Replies by path and request, read once from the corpus."""

    def __init__(self, corpus: Path) -> None:
        anthropic = corpus / ANTHROPIC
        self.tool_use = vcr_replies(
            anthropic / "test_anthropic_instrumentation_multiple_tool_calling.yaml"
        )[0][1]
        self.tool_use_stream = vcr_replies(
            anthropic / "test_anthropic_instrumentation_multiple_tool_calling_streaming.yaml"
        )[0][1]
        self.final = nock_reply(anthropic / "openinference_js_thinking-non-streaming.json")
        self.final_stream = nock_reply(anthropic / "openinference_js_thinking-streaming.json")
        chat = vcr_replies(corpus / CHAT / "test_chat_completion_tool_calls_with_content.yaml")
        self.chat_tool_calls, self.chat_final = chat[0][1], chat[1][1]
        self.chat_stream = vcr_replies(
            corpus / CHAT / "test_chat_completion_multiple_tools_streaming_with_content.yaml"
        )[0][1]
        responses = vcr_replies(
            corpus / RESPONSES / "agent_framework_test_agent_with_tool_calls.yaml"
        )
        self.responses_call, self.responses_final = responses[0][1], responses[1][1]
        self.gemini = GeminiScript(corpus)

    def __call__(self, target: str, body: bytes) -> Reply:
        path = target.split("?", 1)[0]
        request = json.loads(body) if body else {}
        if "/models/" in path and ":" in path.rsplit("/", 1)[-1]:
            return self.gemini(target, request)
        model = str(request.get("model") or "")
        special = self._special(path, model)
        if special is not None:
            return special
        if path.endswith("/v1/messages"):
            answered = _has_tool_result(request.get("messages") or [])
            if request.get("stream"):
                return self.final_stream if answered else self.tool_use_stream
            return self.final if answered else self.tool_use
        if path.endswith("/chat/completions"):
            if request.get("stream"):
                return self.chat_stream
            answered = any(m.get("role") == "tool" for m in request.get("messages") or [])
            return self.chat_final if answered else self.chat_tool_calls
        if path.endswith("/responses"):
            items = request.get("input") if isinstance(request.get("input"), list) else []
            answered = any(
                isinstance(i, dict) and i.get("type") == "function_call_output" for i in items
            )
            return self.responses_final if answered else self.responses_call
        if path.endswith("/models"):
            return Reply(200, chunks=[b'{"data":[{"id":"claude-sonnet-4-6","type":"model"}]}'])
        return Reply(404, chunks=[b'{"error":"not here"}'])

    def _special(self, path: str, model: str) -> Reply | None:
        anthropic_error = path.endswith("/v1/messages")
        if model == "error-429":
            body = (
                b'{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}'
                if anthropic_error
                else b'{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}'
            )
            return Reply(429, chunks=[body])
        if model == "error-500":
            return Reply(
                500,
                chunks=[
                    b'{"type":"error","error":{"type":"api_error","message":"Internal server error"}}'
                ],
            )
        if model == "set-cookie":  # as Cloudflare in front of a vendor's API does
            headers = {"content-type": "application/json", "set-cookie": "__cf_bm=tracker; Path=/"}
            return Reply(200, headers, list(self.final.chunks))
        if model == "hang":
            return Reply(200, hang=3.0, chunks=[self.final.body])
        if model == "cut":
            stream = self.tool_use_stream
            return Reply(200, dict(stream.headers), list(stream.chunks), cut_after=4)
        if model == "slow":
            stream = self.tool_use_stream
            return Reply(200, dict(stream.headers), list(stream.chunks), delay=0.25)
        return None


def _has_tool_result(messages: list) -> bool:
    last = messages[-1] if messages else {}
    content = last.get("content") if isinstance(last, dict) else None
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )
