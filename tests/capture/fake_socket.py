"""A local stand-in for a vendor's Responses socket (`…/v1/responses` in WebSocket mode),
answering each `response.create` with the events of a real streamed call from the
corpus: for the socket relay's tests and `bench/proxy.py`."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

from websockets.asyncio.server import serve

from tests.capture.fake_upstream import vcr_replies
from tests.capture.scenario import RESPONSES

STREAM = "test_responses_create_streaming[content_mode0].yaml"


def corpus_events(corpus: Path) -> list[str]:
    """The `data:` of each server-sent event of a real streamed Responses call."""
    (_, reply), *_ = vcr_replies(corpus / RESPONSES / STREAM)
    text = reply.body.decode()
    return [
        line.removeprefix("data: ")
        for block in text.split("\n\n")
        for line in block.splitlines()
        if line.startswith("data: ")
    ]


def warm_up_events(response_id: str, model: object) -> list[str]:
    """What the Responses API answers a `generate: false` request with: no output."""
    response = {"id": response_id, "object": "response", "created_at": 1, "model": model,
                "output": [], "status": "in_progress"}  # fmt: skip
    usage = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    done = response | {"status": "completed", "usage": usage}
    return [
        json.dumps({"type": "response.created", "sequence_number": 0, "response": response}),
        json.dumps({"type": "response.completed", "sequence_number": 1, "response": done}),
    ]


class FakeResponsesSocket:
    """The vendor's `…/v1/responses` socket, on a loopback port in a thread of its own.

    `response.create` with model "slow" sends two events and then nothing; "cut" sends
    two and closes the socket (1011); one with `generate: false` (a warm-up, as the
    Codex CLI sends) is answered as the vendor does, created and completed with no
    output, its id `resp_warm_<n>`."""

    def __init__(self, events: list[str]) -> None:
        self.events = events
        self.handshakes: list[dict[str, str]] = []
        self.received: list[str] = []
        self.port = 0
        self._ready = threading.Event()
        self._stop: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _check(self, connection, request):
        self.handshakes.append({k.lower(): v for k, v in request.headers.raw_items()})
        if request.path != "/v1/responses":
            return connection.respond(404, "no socket here\n")
        return None

    async def _answer(self, socket) -> None:
        async for message in socket:
            self.received.append(message)
            event = json.loads(message)
            if event.get("type") != "response.create":
                continue
            model = event.get("model")
            if event.get("generate") is False:
                for text in warm_up_events(f"resp_warm_{len(self.received)}", model):
                    await socket.send(text)
                continue
            if model in ("slow", "cut"):
                for text in self.events[:2]:
                    await socket.send(text)
                if model == "cut":
                    await socket.close(1011, "upstream failure")
                    return
                continue
            for text in self.events:
                await socket.send(text)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = self._loop.create_future()
        async with serve(self._answer, "127.0.0.1", 0, process_request=self._check) as server:
            self.port = server.sockets[0].getsockname()[1]
            self._ready.set()
            await self._stop

    def __enter__(self) -> FakeResponsesSocket:
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True)
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set_result, None)
        self._thread.join(10)
