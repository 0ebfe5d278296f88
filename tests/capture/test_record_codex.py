"""`manage.py record -- codex …`: the Codex CLI ignores OPENAI_BASE_URL, so `record`
gives it the proxy as `-c openai_base_url=…`; and an upstream without the Responses
WebSocket mode gets Codex's socket refused with 426, on which Codex goes on over HTTP at
once (a 403 it retried 7 times, 6.5 s, before falling back).

The upstream is a local stand-in of the Responses API over HTTP only. The first test runs
a stand-in `codex` (the real OpenAI SDK, pointed only where `-c` says); the second runs
the real Codex CLI when one is installed (`LOOP_INSPECTOR_CODEX`, or `codex` on PATH:
`npm install @openai/codex`)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from collections.abc import Iterator

import pytest

from tests.capture.conftest import LiveServer, capture_server
from tests.capture.fake_upstream import FakeUpstream, Reply
from tests.capture.scenario import OPENAI_SECRET, ports
from tests.capture.test_commands import manage, no_database_env


def streamed_answer(text: str) -> Reply:
    item = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    response = {"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-5-codex"}
    usage = {
        "input_tokens": 10,
        "output_tokens": 3,
        "total_tokens": 13,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    events = [
        {
            "type": "response.created",
            "response": response | {"status": "in_progress", "output": []},
        },
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {
            "type": "response.completed",
            "response": response | {"status": "completed", "output": [item], "usage": usage},
        },
    ]
    chunks = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]
    return Reply(200, {"content-type": "text/event-stream"}, chunks)


def http_only(path: str, body: bytes) -> Reply:
    """POST …/responses answered with a stream; the socket's GET (and the rest) 404."""
    if body and path.split("?")[0].endswith("/responses"):
        return streamed_answer("All done.")
    return Reply(404, chunks=[b'{"error":{"message":"not here"}}'])


@pytest.fixture(scope="module")
def responses_upstream() -> Iterator[FakeUpstream]:
    with FakeUpstream(http_only, port=ports()) as fake:
        yield fake


@pytest.fixture(scope="module")
def codex_server(responses_upstream, tmp_path_factory) -> Iterator[LiveServer]:
    with capture_server(
        tmp_path_factory.mktemp("codex-server"),
        INSPECTOR_UPSTREAM_OPENAI=responses_upstream.base + "/v1",
    ) as server:
        yield server


STAND_IN = textwrap.dedent(
    """\
    #!PYTHON
    import os, sys
    import openai
    # As the Codex CLI: OPENAI_BASE_URL is not read, only `-c openai_base_url="…"`.
    args = sys.argv[1:]
    url = next(a.split("=", 1)[1].strip('"') for a in args if a.startswith("openai_base_url="))
    assert args[0] == "-c" and args[2:] == ["exec", "say hi"], args
    client = openai.OpenAI(api_key="KEY", base_url=url, max_retries=0)
    with client.responses.create(model="gpt-5-codex", input="say hi", stream=True) as events:
        print([e.type for e in events][-1])
    """
)


def test_record_gives_codex_the_proxy_as_a_config_override(codex_server, tmp_path):
    codex = tmp_path / "codex"
    codex.write_text(STAND_IN.replace("PYTHON", sys.executable).replace("KEY", OPENAI_SECRET))
    codex.chmod(0o755)
    done = manage(
        "record", "--server", codex_server.base, "--session", "codex-flag",
        "--", str(codex), "exec", "say hi", env=no_database_env(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "response.completed" in done.stdout
    assert "openai-responses, 1 calls" in done.stdout


def _real_codex() -> str | None:
    return os.environ.get("LOOP_INSPECTOR_CODEX") or shutil.which("codex")


@pytest.mark.skipif(_real_codex() is None, reason="the Codex CLI is not installed")
def test_the_real_codex_is_recorded_and_falls_back_to_http_after_one_refused_socket(
    codex_server, responses_upstream, tmp_path
):
    codex = _real_codex()
    assert codex is not None
    home = tmp_path / "home"
    home.mkdir()
    env = no_database_env(tmp_path) | {
        "HOME": str(home),
        "OPENAI_API_KEY": OPENAI_SECRET,
        "CODEX_API_KEY": OPENAI_SECRET,
    }
    seen = len(responses_upstream.received)
    done = manage(
        "record", "--server", codex_server.base, "--session", "real-codex",
        "--", codex, "exec", "--skip-git-repo-check", "say hi", env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "All done." in done.stdout
    assert "openai-responses, 1 calls" in done.stdout
    received = responses_upstream.received[seen:]
    sockets = [r for r in received if r.headers.get("Upgrade", "").lower() == "websocket"]
    posts = [r for r in received if r.body]
    assert len(sockets) == 1  # refused with 426: no retry (a 403 was retried 7 times)
    assert len(posts) == 1
    assert OPENAI_SECRET not in codex_server.log.read_text()
