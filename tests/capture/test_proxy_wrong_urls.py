"""Issue 23: a base URL with a doubled or missing version, or pointed at the other
vendor's route, got a bare 404 and the SDKs printed only "Error code: 404". Now the proxy
answers in the calling SDK's error shape, with the URL to use, and calls no upstream; its
own refusals (no token, no upstream, too large) are in the vendor's shape too."""

from __future__ import annotations

import json

import anthropic
import httpx
import openai
import pytest
from channels.testing import HttpCommunicator
from django.test import AsyncClient, override_settings
from google import genai
from google.genai import errors, types

from inspector.asgi import application
from tests.capture.gemini_script import GEMINI_SECRET
from tests.capture.scenario import OPENAI_SECRET, SECRET
from tests.live.conftest import run_async
from traces.access.decisions import forget_decisions

MESSAGE = [{"role": "user", "content": "hi"}]


def openai_at(server, base: str) -> openai.OpenAI:
    return openai.OpenAI(api_key=OPENAI_SECRET, base_url=server.base + base, max_retries=0)


def anthropic_at(server, base: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=SECRET, base_url=server.base + base, max_retries=0)


@pytest.mark.parametrize(
    ("base", "hint"),
    [
        ("/proxy/openai/v1/v1", "has /v1 twice"),
        ("/proxy/openai", "has no /v1"),
        ("/proxy/s/wrong/openai", "has no /v1"),
        ("/proxy/anthropic/v1", "is a path of the OpenAI API"),
    ],
)
def test_the_openai_sdk_is_told_the_url_to_use(inspector_server, upstream, base, hint):
    before = len(upstream.received)
    with pytest.raises(openai.NotFoundError) as caught:
        openai_at(inspector_server, base).chat.completions.create(
            model="gpt-4o-mini", messages=MESSAGE
        )
    session = "/s/wrong" if "/s/wrong" in base else ""
    message = str(caught.value)
    assert hint in message
    assert f"/proxy{session}/openai/v1/chat/completions" in message  # the URL to use
    body = json.loads(caught.value.response.content)
    assert set(body["error"]) >= {"message", "type", "code"}  # OpenAI's shape
    assert caught.value.code == "not_found_error"
    assert len(upstream.received) == before  # no upstream call


@pytest.mark.parametrize(
    ("base", "hint"),
    [
        ("/proxy/anthropic/v1", "has /v1 twice"),
        ("/proxy/openai/v1", "is a path of the Anthropic API"),
    ],
)
def test_the_anthropic_sdk_is_told_the_url_to_use(inspector_server, upstream, base, hint):
    before = len(upstream.received)
    with pytest.raises(anthropic.NotFoundError) as caught:
        anthropic_at(inspector_server, base).messages.create(
            model="claude-sonnet-4-6", max_tokens=10, messages=MESSAGE
        )
    assert hint in str(caught.value)
    assert "/proxy/anthropic/v1/messages" in str(caught.value)
    body = json.loads(caught.value.response.content)
    assert body["type"] == "error" and body["error"]["type"] == "not_found_error"
    assert len(upstream.received) == before


@pytest.mark.parametrize("base", ["/proxy/gemini/v1beta", "/proxy/gemini/v1"])
def test_the_genai_sdk_is_told_the_url_to_use(inspector_server, upstream, base):
    before = len(upstream.received)
    client = genai.Client(
        api_key=GEMINI_SECRET,
        http_options=types.HttpOptions(
            base_url=inspector_server.base + base,
            retry_options=types.HttpRetryOptions(attempts=1),
        ),
    )
    with pytest.raises(errors.ClientError) as caught:
        client.models.generate_content(model="gemini-2.5-flash", contents="hi")
    assert caught.value.code == 404 and caught.value.status == "NOT_FOUND"
    assert "twice" in caught.value.message and "base URL to /proxy/gemini" in caught.value.message
    assert "twice" in str(caught.value)
    assert len(upstream.received) == before


def test_a_path_naming_no_vendor_answers_in_every_vendors_shape(inspector_server):
    reply = httpx.post(f"{inspector_server.base}/proxy/mistral/v1/chat", json={}, timeout=10)
    assert reply.status_code == 404
    error = reply.json()["error"]
    assert error["code"] == 404 and error["status"] == "NOT_FOUND"  # Gemini's fields
    assert error["type"] == "not_found_error"  # Anthropic's and OpenAI's
    assert "/proxy/gemini" in error["message"] and "/proxy/openai/v1" in error["message"]


@pytest.mark.asyncio
@override_settings(INSPECTOR_UPSTREAM_GEMINI="")
async def test_an_unconfigured_gemini_is_a_404_in_its_shape():
    reply = await AsyncClient().post(
        "/proxy/gemini/v1beta/models/m:generateContent", data=b"{}", content_type="application/json"
    )
    assert reply.status_code == 404
    error = reply.json()["error"]
    assert error["status"] == "NOT_FOUND" and "INSPECTOR_UPSTREAM_GEMINI" in error["message"]


AUTH_CASES = [
    ("/proxy/gemini/v1beta/models/m:generateContent", ("error", "status"), "UNAUTHENTICATED"),
    ("/proxy/anthropic/v1/messages", ("error", "type"), "authentication_error"),
    ("/proxy/openai/v1/chat/completions", ("error", "type"), "authentication_error"),
]


@pytest.mark.django_db
@pytest.mark.asyncio
@pytest.mark.parametrize(("url", "field", "value"), AUTH_CASES)
async def test_a_refused_caller_gets_the_vendors_shape_from_django(settings, url, field, value):
    settings.INSPECTOR_AUTH = True
    reply = await AsyncClient().post(url, data=b"{}", content_type="application/json")
    assert reply.status_code == 401
    assert reply["WWW-Authenticate"].startswith("Bearer")
    assert reply["X-Access-Denied"] == "ingest"
    body = reply.json()
    assert body[field[0]][field[1]] == value
    assert "Log in, or send an API token." in body["error"]["message"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("url", "field", "value"), AUTH_CASES)
def test_a_refused_caller_gets_the_vendors_shape_from_the_fast_path(settings, url, field, value):
    settings.INSPECTOR_AUTH = True
    headers = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")]

    async def scenario():
        try:
            communicator = HttpCommunicator(application, "POST", url, body=b"{}", headers=headers)
            response = await communicator.get_response(timeout=10)
            await communicator.wait(timeout=10)
            return response
        finally:
            forget_decisions()

    response = run_async(scenario)
    assert response["status"] == 401
    names = {k.decode().lower(): v.decode() for k, v in response["headers"]}
    assert names["www-authenticate"].startswith("Bearer") and "x-access-denied" in names
    body = json.loads(response["body"])
    assert body[field[0]][field[1]] == value
    assert "Log in" in body["error"]["message"]
