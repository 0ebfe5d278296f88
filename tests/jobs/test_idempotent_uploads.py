"""`Idempotency-Key` on uploads (issue 26): a client that lost the answer and sends the same
upload again gets the first upload's trace or job back, never a second trace; the same
key with other bytes is refused; two uploads racing with one key store one trace."""

from __future__ import annotations

import threading

import pytest
from django.test import Client, override_settings
from django.urls import reverse

from tests.live.events import agent_lines, ndjson
from traces import models

pytestmark = pytest.mark.django_db(transaction=True)

THRESHOLD = 4096


def post(client, data: bytes, key: str | None, path: str = "traces:api-traces", **query):
    url = reverse(path)
    if query:
        url += "?" + "&".join(f"{k}={v}" for k, v in query.items())
    headers = {"Idempotency-Key": key} if key is not None else {}
    return client.post(url, data=data, content_type="application/x-ndjson", headers=headers)


def test_the_same_upload_sent_again_with_its_key_is_the_same_trace(client):
    data = ndjson(agent_lines(6))
    first = post(client, data, "run-42", labels="night")
    assert first.status_code == 201, first.content
    assert "Idempotent-Replayed" not in first

    again = post(client, data, "run-42", labels="night")
    assert again.status_code == 201
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert models.Trace.objects.count() == 1
    assert models.UploadKey.objects.get().trace_id == models.Trace.objects.get().pk


def test_without_a_key_a_second_upload_is_a_second_trace(client):
    data = ndjson(agent_lines(3))
    assert post(client, data, None).status_code == 201
    assert post(client, data, None).status_code == 201
    assert models.Trace.objects.count() == 2


def test_a_key_reused_for_other_bytes_is_refused_and_stores_nothing(client):
    assert post(client, ndjson(agent_lines(3)), "k1").status_code == 201
    other = post(client, ndjson(agent_lines(4)), "k1")
    assert other.status_code == 422
    assert "another upload" in other.json()["error"]
    assert models.Trace.objects.count() == 1


@pytest.mark.parametrize("key", ["", "x" * 201, "caf\u00e9", "tab\there"])
def test_a_malformed_key_is_a_clear_400(client, key):
    reply = post(client, ndjson(agent_lines(2)), key)
    assert reply.status_code == 400
    assert "Idempotency-Key" in reply.json()["error"]
    assert models.Trace.objects.count() == 0


def test_a_deleted_trace_frees_its_key(client):
    data = ndjson(agent_lines(3))
    first = post(client, data, "k2").json()
    assert client.delete(reverse("traces:api-trace", args=[first["id"]])).status_code == 200
    again = post(client, data, "k2")
    assert again.status_code == 201
    assert "Idempotent-Replayed" not in again
    assert again.json()["id"] != first["id"]


def test_two_uploads_racing_with_one_key_store_one_trace():
    """Both requests are read and prepared at once; whichever commits second answers with
    the first one's trace (the unique key, not a check-then-insert, decides)."""
    data = ndjson(agent_lines(30))
    start = threading.Barrier(2)
    replies: list = [None, None]

    def send(slot: int) -> None:
        client = Client(HTTP_HOST="127.0.0.1")
        start.wait()
        replies[slot] = post(client, data, "raced")

    threads = [threading.Thread(target=send, args=(slot,)) for slot in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert [reply.status_code for reply in replies] == [201, 201], [r.content for r in replies]
    assert replies[0].json()["id"] == replies[1].json()["id"]
    assert models.Trace.objects.count() == 1
    assert sum(reply.has_header("Idempotent-Replayed") for reply in replies) == 1


def test_a_background_upload_sent_again_is_the_same_job_and_then_its_trace(client, tmp_path):
    data = ndjson(agent_lines(40))
    assert len(data) > THRESHOLD
    with override_settings(
        INSPECTOR={"BACKGROUND_UPLOAD_BYTES": THRESHOLD}, INSPECTOR_DATA_DIR=tmp_path
    ):
        first = post(client, data, "big-1", path="traces:api-jobs")
        assert first.status_code == 202, first.content
        again = post(client, data, "big-1", path="traces:api-jobs")
        assert again.status_code == 202
        assert again["Idempotent-Replayed"] == "true"
        assert again.json()["id"] == first.json()["id"]
        # The queue runs inline in the tests: the job is done, and says which trace it made.
        assert again.json()["state"] == "done"
        assert again.json()["trace"] == str(models.Trace.objects.get().pk)
        # The retried body was not kept, and no second job was made.
        assert models.Job.objects.count() == 1
        assert list((tmp_path / "uploads").iterdir()) == []
        # The old alias (a large body to POST /api/traces) honours the key too.
        alias = post(client, data, "big-1")
        assert alias.status_code == 202 and alias.json()["id"] == first.json()["id"]
        assert (
            post(client, ndjson(agent_lines(41)), "big-1", path="traces:api-jobs").status_code
            == 422
        )
    assert models.Trace.objects.count() == 1
