"""One walk through everything that keeps originals, run against any storage backend.

`listing(prefix)` names the objects under a prefix as the store itself reports them (a
folder walk, an S3 listing), so the checks do not rely on the code they test.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import zipfile
from collections.abc import Callable

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.live.events import agent_lines, ndjson
from traces import models
from traces.services import ingest
from traces.services.deletion import trace_delete
from traces.storage import originals

Listing = Callable[[str], list[str]]

# A line holding a raw NUL byte (not JSON, so a line error) and one with an escaped NUL
# in a string: the original keeps both byte for byte.
NUL_LINES = b'{"type": "note", "text": "raw \x00 byte"}\n{"type": "note", "text": "esc \\u0000"}\n'


def single_file(calls: int = 3) -> bytes:
    return ndjson(agent_lines(calls)) + NUL_LINES


def upload(client, data: bytes, name: str) -> str:
    reply = client.post(
        reverse("traces:api-traces") + f"?name={name}", data, content_type="application/x-ndjson"
    )
    assert reply.status_code == 201, reply.content
    return reply.json()["id"]


def download(client, trace_id: str, query: str = "") -> bytes:
    reply = client.get(reverse("traces:download", args=[trace_id]) + query)
    assert reply.status_code == 200
    return reply.content


def exercise(client, listing: Listing, capture_on_commit) -> dict[str, str]:
    """Upload, several files, live, reanalyze, a run set, delete; returns the ids made."""
    data = single_file()
    first = upload(client, data, "first")
    assert download(client, first) == data
    chunk = models.SourceChunk.objects.get(trace_id=first)
    assert listing(originals.trace_prefix(first)) == [chunk.key]
    assert chunk.key == originals.chunk_name(first, 0)
    assert originals.chunk_bytes(chunk) == data

    twin = upload(client, data, "twin")  # the same bytes again: objects of its own

    a, b = ndjson(agent_lines(2)), single_file(4)
    reply = client.post(
        reverse("traces:api-traces"),
        {"file": [SimpleUploadedFile("a.jsonl", a), SimpleUploadedFile("b.jsonl", b)]},
    )
    assert reply.status_code == 201, reply.content
    several = reply.json()["id"]
    assert len(listing(originals.trace_prefix(several))) == 2
    assert download(client, several, "?file=0") == a
    assert download(client, several, "?file=1") == b
    bundle = zipfile.ZipFile(io.BytesIO(download(client, several)))
    assert (bundle.read("a.jsonl"), bundle.read("b.jsonl")) == (a, b)

    live = _live_trace(client, single_file(3))
    trace = models.Trace.objects.get(pk=live["id"])
    assert trace.source_sha256 == hashlib.sha256(live["data"]).hexdigest()
    assert len(listing(originals.trace_prefix(trace.pk))) == trace.chunks.count() == 3
    assert download(client, live["id"]) == live["data"]

    calls = models.Trace.objects.get(pk=first).calls_count
    assert ingest.trace_reanalyze(trace=models.Trace.objects.get(pk=first)).trace.calls_count
    assert models.Trace.objects.get(pk=first).calls_count == calls

    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as runs:
        runs.writestr("one.jsonl", ndjson(agent_lines(2)))
        runs.writestr("two.jsonl", ndjson(agent_lines(3)))
    reply = client.post(
        reverse("traces:api-sets"),
        {"name": "stored set", "file": [SimpleUploadedFile("runs.zip", archive.getvalue())]},
    )
    assert reply.status_code == 201, reply.content
    set_file = models.RunSetFile.objects.get(run_set__name="stored set")
    assert listing(originals.set_prefix(set_file.run_set_id)) == [set_file.key]
    assert originals.set_file_bytes(set_file) == archive.getvalue()

    with capture_on_commit(execute=True):
        trace_delete(trace=models.Trace.objects.get(pk=first), who="test")
    assert listing(originals.trace_prefix(first)) == []
    assert download(client, twin) == data  # the twin's objects are its own
    assert len(listing(originals.trace_prefix(several))) == 2
    return {"twin": twin, "several": several, "live": live["id"]}


def _live_trace(client, data: bytes) -> dict:
    """A live trace fed in three batches, then closed."""
    reply = client.post(reverse("traces:api-traces") + "?live=1&name=live")
    assert reply.status_code == 201
    trace_id = reply.json()["id"]
    lines = data.splitlines(keepends=True)
    cuts = [0, len(lines) // 3, 2 * len(lines) // 3, len(lines)]
    for start, end in itertools.pairwise(cuts):
        sent = client.post(
            reverse("live:lines", args=[trace_id]) + f"?offset={start}",
            data=b"".join(lines[start:end]),
            content_type="application/x-ndjson",
        )
        assert sent.status_code == 200, sent.content
    assert client.post(reverse("live:close", args=[trace_id])).status_code == 200
    return {"id": trace_id, "data": data}


def missing_original(client, remove: Callable[[str], object]) -> None:
    """An object removed behind the rows' back (a store moved or misconfigured): the
    download says so with a 404, never a 500."""
    trace_id = upload(client, single_file(2), "lost")
    remove(models.SourceChunk.objects.get(trace_id=trace_id).key)
    reply = client.get(reverse("traces:download", args=[trace_id]))
    assert reply.status_code == 404
    assert reply.content == b"The original of this trace is missing from storage."
