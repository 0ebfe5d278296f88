"""Gemini calls carrying the key in both of its shapes, for the credential tests: the
google-genai SDK (`x-goog-api-key`), streamed and not, an upstream error, and a raw
client sending `?key=` as Google's REST examples and the Gemini CLI's API-key mode do."""

from __future__ import annotations

import httpx
import pytest
from google import genai
from google.genai import errors, types

from tests.capture.gemini_script import GEMINI_SECRET

MODEL = "gemini-3-pro-preview"


def gemini_calls_with_keys(server, session: str) -> int:
    """Make the calls; returns how many are recorded (countTokens is not)."""
    client = genai.Client(
        api_key=GEMINI_SECRET,
        http_options=types.HttpOptions(
            base_url=f"{server.base}/proxy/s/{session}/gemini",
            retry_options=types.HttpRetryOptions(attempts=1),
        ),
    )
    client.models.generate_content(model=MODEL, contents="What is my country?")
    list(client.models.generate_content_stream(model=MODEL, contents="And its capital?"))
    client.models.count_tokens(model=MODEL, contents="How many?")
    with pytest.raises(errors.ClientError):
        client.models.generate_content(model="error-429", contents="Too many")
    url = f"{server.base}/proxy/s/{session}/gemini/v1beta/models/{MODEL}"
    body = {"contents": [{"role": "user", "parts": [{"text": "By query"}]}]}
    for method in ("generateContent", "streamGenerateContent?alt=sse&"):
        separator = "" if method.endswith("&") else "?"
        reply = httpx.post(f"{url}:{method}{separator}key={GEMINI_SECRET}", json=body, timeout=30)
        assert reply.status_code == 200
    return 5
