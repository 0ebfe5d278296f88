"""The Gemini API's side of the proxy tests and benchmark: replies replayed from a
recorded pydantic-ai cassette (a `get_country` function call, then the answer), in the
three shapes the API answers with: one `GenerateContentResponse`, `?alt=sse` events, and
(without `alt=sse`) a JSON array of chunks streamed element by element."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.capture.fake_upstream import Reply

CASSETTE = "gemini_api/pydantic-ai_test_google_streaming_tool_call_thought_signature.yaml"
GEMINI_SECRET = "AIzaSyLOOPINSPECTORgeminiTESTsecret0123456"
"""A key of Google's shape (`AIza` + 35 characters): sent in `x-goog-api-key` or `?key=`."""
TOOL = "get_country"


def events_of(text: str) -> list[dict[str, Any]]:
    """The `data:` payloads of a recorded event stream."""
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


def merged(events: list[dict[str, Any]]) -> dict[str, Any]:
    """A stream's chunks as the one response `generateContent` answers with: the parts in
    order (adjacent texts joined), the last finish reason, usage and ids."""
    parts: list[dict[str, Any]] = []
    finish = None
    for event in events:
        candidate = event["candidates"][0]
        finish = candidate.get("finishReason", finish)
        for part in candidate["content"].get("parts", []):
            if "text" in part and parts and set(parts[-1]) == {"text"} and set(part) == {"text"}:
                parts[-1] = {"text": parts[-1]["text"] + part["text"]}
            elif part != {"text": ""}:
                parts.append(dict(part))
    last = events[-1]
    candidate = {"content": {"parts": parts, "role": "model"}, "finishReason": finish, "index": 0}
    return {
        "candidates": [candidate],
        "usageMetadata": last["usageMetadata"],
        "modelVersion": last["modelVersion"],
        "responseId": last["responseId"],
    }


def gemini_error(status: int, code: str, message: str) -> Reply:
    body = {"error": {"code": status, "message": message, "status": code}}
    return Reply(status, chunks=[json.dumps(body).encode()])


class GeminiScript:
    """Replies to `/v1beta/models/<model>:<method>` by method and by whether the request
    already answers the function call."""

    def __init__(self, corpus: Path) -> None:
        document = yaml.safe_load((corpus / CASSETTE).read_text())
        turns = [i["response"]["body"]["string"] for i in document["interactions"]]
        self.call_events, self.answer_events = events_of(turns[0]), events_of(turns[1])

    def __call__(self, target: str, request: dict[str, Any]) -> Reply:
        path, _, query = target.partition("?")
        model, _, method = path.rsplit("/", 1)[-1].partition(":")
        if model == "error-429":
            return gemini_error(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted.")
        if method == "countTokens":
            return Reply(200, chunks=[b'{"totalTokens": 29}'])
        contents = request.get("contents") or []
        answered = any(
            "functionResponse" in part
            for content in contents[-1:]
            for part in (content.get("parts") or [])
        )
        events = self.answer_events if answered else self.call_events
        if method == "generateContent":
            return Reply(200, chunks=[json.dumps(merged(events)).encode()])
        if method != "streamGenerateContent":
            return gemini_error(404, "NOT_FOUND", f"Method {method} not found.")
        if "alt=sse" in query:
            chunks = [b"data: " + json.dumps(e).encode() + b"\r\n\r\n" for e in events]
            cut = 1 if model == "cut" else None  # the connection drops after one event
            return Reply(200, {"content-type": "text/event-stream"}, chunks, cut_after=cut)
        # The JSON-array stream: '[' then one element per chunk, ',' between them, ']'.
        chunks = [
            (b"[" if n == 0 else b",\r\n") + json.dumps(e).encode() for n, e in enumerate(events)
        ]
        chunks[-1] += b"]"
        return Reply(200, {"content-type": "application/json; charset=UTF-8"}, chunks, chunked=True)
