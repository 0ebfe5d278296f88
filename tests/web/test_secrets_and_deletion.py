"""Shared mode keeps credentials out of storage and pages; deleting frees unused blobs.

The planted-key test searches every table of the database (compressed blobs unpacked),
every object in storage (the originals, unpacked) and every page, export and download of
the trace.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import threading
import time
import zipfile
from datetime import timedelta

import orjson
import pytest
from django.core.files.base import ContentFile
from django.core.management import CommandError, call_command
from django.db import connection, connections, transaction
from django.test import Client
from django.utils import timezone

from tests.live.events import agent_lines, ndjson
from tests.web.team_world import build_world
from traces import models
from traces.access.rules import Principal
from traces.core.reading import archive, blobs
from traces.core.reading.redact import redact
from traces.live.writes import append_lines, create_live_trace
from traces.services.deletion import trace_delete
from traces.services.set_ingest import set_upload
from traces.services.upload import trace_upload
from traces.storage import originals

PLANTED = "sk-ant-api03-PLANTEDkey0123456789abcdefXYZ"
CORPUS_FILE = "claude_trace_jsonl/claude-trace-dev_test-traffic.jsonl"


@pytest.fixture
def shared(db, settings):
    settings.INSPECTOR_AUTH = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return build_world()


def planted_trace_bytes(corpus) -> bytes:
    """Real recorded traffic (claude-trace) with a live-looking key in its headers."""
    lines = (corpus / CORPUS_FILE).read_bytes().splitlines(keepends=True)[:6]
    data = b"".join(lines).replace(b"Bearer [REDACTED]", f"Bearer {PLANTED}".encode())
    data = data.replace(b'"x-app": "cli"', f'"x-app": "cli", "x-api-key": "{PLANTED}"'.encode())
    assert data.count(PLANTED.encode()) >= 6
    return data


def database_holds(needle: bytes) -> list[str]:
    """Tables and columns whose stored value holds `needle` (compressed values unpacked)."""
    found = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            columns = [c[0] for c in cursor.description]
            for row in cursor.fetchall():
                for column, value in zip(columns, row, strict=True):
                    for text in _readings(value):
                        if needle in text:
                            found.append(f"{table}.{column}")
    return sorted(set(found))


def storage_holds(needle: bytes, prefix: str = "originals") -> list[str]:
    """Names of the objects in storage whose bytes (unpacked) hold `needle`."""
    store = originals.storage()
    try:
        folders, files = store.listdir(prefix)
    except FileNotFoundError:
        return []
    found = [
        f"{prefix}/{name}"
        for name in files
        if any(needle in text for text in _readings(originals.get(f"{prefix}/{name}")))
    ]
    for folder in folders:
        found += storage_holds(needle, f"{prefix}/{folder}")
    return sorted(found)


def _readings(value) -> list[bytes]:
    if value is None:
        return []
    if isinstance(value, memoryview | bytes | bytearray):
        raw = bytes(value)
        readings = [raw]
        for unpack in (archive.decompress, blobs.unpack):
            with contextlib.suppress(Exception):  # not this kind of packing
                readings.append(unpack(raw))
        return [*readings, *(inner for reading in readings for inner in _unwrapped(reading))]
    return [str(value).encode()]


def _unwrapped(data: bytes, depth: int = 0) -> list[bytes]:
    """What a gzip or ZIP (an .eval, a run set's archive) holds, members of members too."""
    found: list[bytes] = []
    with contextlib.suppress(Exception):  # not this kind of packing
        if data.startswith(b"\x1f\x8b"):
            found.append(gzip.decompress(data))
        elif data.startswith(b"PK"):
            with zipfile.ZipFile(io.BytesIO(data)) as bundle:
                found += [bundle.read(info) for info in bundle.infolist()]
    if depth < 3:
        found += [inner for member in found for inner in _unwrapped(member, depth + 1)]
    return found


def pages_holding(client: Client, trace: models.Trace, needle: str) -> list[str]:
    base = f"/traces/{trace.pk}/"
    urls = [
        base,
        base + "postmortem",
        base + "export.md",
        base + "export.html",
        base + "diagram.json",
        f"/api/traces/{trace.pk}",
        base + "download",
    ]
    for call in trace.calls.values_list("index", flat=True):
        urls += [f"{base}calls/{call}/", f"{base}calls/{call}/request.json"]
    holding = []
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        if needle.encode() in response.content:
            holding.append(url)
    return holding


@pytest.mark.corpus
def test_a_planted_key_is_nowhere_in_a_shared_mode_trace(shared, corpus):
    client = shared.clients["member"]
    response = client.post(
        "/api/traces?name=planted&project=alpha",
        planted_trace_bytes(corpus),
        content_type="application/x-ndjson",
    )
    assert response.status_code == 201, response.content
    trace = models.Trace.objects.get(pk=response.json()["id"])
    assert trace.calls_count >= 3
    assert trace.redacted["authorization"] >= 3 and trace.redacted["x-api-key"] >= 3
    assert database_holds(PLANTED.encode()) == []
    assert storage_holds(PLANTED.encode()) == []
    assert pages_holding(client, trace, PLANTED) == []
    page = client.get(f"/traces/{trace.pk}/").content.decode()
    assert "The original was redacted at upload" in page and "x-api-key" in page


@pytest.mark.corpus
def test_a_project_keeping_originals_holds_the_key_in_its_original_only(shared, corpus):
    shared.alpha.keep_originals = True
    shared.alpha.save()
    client = shared.clients["member"]
    response = client.post(
        "/api/traces?project=alpha", planted_trace_bytes(corpus), content_type="text/plain"
    )
    trace = models.Trace.objects.get(pk=response.json()["id"])
    assert trace.redacted == {}
    assert database_holds(PLANTED.encode()) == []
    assert storage_holds(PLANTED.encode()) == [originals.chunk_name(trace.pk, 0)]
    assert pages_holding(client, trace, PLANTED) == [f"/traces/{trace.pk}/download"]


# -- every shape the redaction rule knows, through every way an upload is encoded ----------
SHAPE_SECRETS = {
    "li_": "li_" + "Pl4nT3dT0k" * 4 + "end",
    "JWT": "eyJhbGciOiJIUzI1NiJ9.eyJwbGFudGVkIjoiand0In0.PlantedJwtSignature0123456789",
    "sk_live_": "sk_live_51PlantedStripeKey0000",
    "hf_": "hf_PlantedHuggingFaceTokenABCDEFGHIJ",
    "glpat-": "glpat-PlantedGitLab0123456",
    "sk-": "sk-ant-api03-PlantedAnthropic0123456",
    "AKIA": "AKIAPLANTED000000000",
    "ghp_": "ghp_PlantedGitHubToken0123456789abcdef",
    "AIza": "AIzaSyPlantedGoogleKey0123456789abcdefg",
    "xoxb-": "xoxb-000-PlantedSlack",
    "PEM": "MIIEpAIBAAKCAQEAplantedPEMbody",
    "Basic": "UGxhbnRlZDpiYXNpYzEyMw==",
    "AWS secret": "PlantedAWSsecretKey/0123456789abcdefghij",
}
"""Value shapes, planted in a message's text (found by their shape alone)."""
NAME_SECRETS = {
    name: f"plantedvalue-{index}-zq"
    for index, name in enumerate(
        (
            "x-amz-security-token",
            "x-auth-token",
            "x-litellm-api-key",
            "private-token",
            "ocp-apim-subscription-key",
            "x-custom-session-token",
            "har authorization",
            "otel x-api-key",
            "otlp authorization",
            "pair x-api-key",
            "query key",
            "query api_key",
            "tool password",
            "tool client_secret",
            "field access_token",
            "vcr authorization",
            "vcr x-api-key",
        )
    )
}
"""Values that are secret by their name only, in the shape each name is recorded in."""
ALL_SECRETS = [*SHAPE_SECRETS.values(), *NAME_SECRETS.values()]


def planted_shapes_text() -> str:
    s = SHAPE_SECRETS
    return (
        f"tokens {s['li_']} {s['JWT']} {s['sk_live_']} {s['hf_']} {s['glpat-']} {s['sk-']} "
        f"{s['AKIA']} {s['ghp_']} {s['AIza']} {s['xoxb-']}\n"
        f"-----BEGIN PRIVATE KEY-----\n{s['PEM']}\n-----END PRIVATE KEY-----\n"
        f"curl -H 'Authorization: Basic {s['Basic']}'\n"
        f"AWS_SECRET_ACCESS_KEY={s['AWS secret']}"
    )


def planted_every_shape(corpus) -> bytes:
    """Real claude-trace traffic with every name and value shape planted in each line."""
    v = NAME_SECRETS
    lines = (corpus / CORPUS_FILE).read_bytes().splitlines()[:6]
    out = []
    for line in lines:
        record = orjson.loads(line)
        request = record["request"]
        for name in list(v)[:6]:
            request["headers"][name] = v[name]
        messages = request.get("body", {}).get("messages") or []
        if messages:
            messages[0]["content"] = f"quota {planted_shapes_text()}"
        request["har"] = {"headers": [{"name": "Authorization", "value": v["har authorization"]}]}
        request["attributes"] = {"http.request.header.x-api-key": [v["otel x-api-key"]]}
        request["otlp"] = [
            {
                "key": "http.request.header.authorization",
                "value": {"stringValue": v["otlp authorization"]},
            }
        ]
        request["pairs"] = [["x-api-key", v["pair x-api-key"]]]
        request["url"] += f"&key={v['query key']}&api_key={v['query api_key']}"
        arguments = {"password": v["tool password"], "client_secret": v["tool client_secret"]}
        request["tool"] = {"arguments": orjson.dumps(arguments).decode()}
        request["oauth"] = {"access_token": v["field access_token"]}
        out.append(orjson.dumps(record))
    data = b"\n".join(out) + b"\n"
    for secret in ALL_SECRETS[:-2]:  # all but the cassette's
        assert secret.encode() in data, secret
    return data


def planted_cassette(corpus) -> bytes:
    """A recorded OpenAI cassette whose headers hold planted VCR list items."""
    path = corpus / "openai_chat_completions_api/test_chat_completion_tool_calls_with_content.yaml"
    data = path.read_bytes().replace(
        b"      - Bearer test_openai_api_key\n",
        b"      - Bearer " + NAME_SECRETS["vcr authorization"].encode() + b"\n"
        b"      x-api-key:\n      - " + NAME_SECRETS["vcr x-api-key"].encode() + b"\n",
    )
    assert NAME_SECRETS["vcr x-api-key"].encode() in data
    return data


def planted_eval(corpus) -> bytes:
    """The corpus Inspect .eval with every shape planted into its samples' metadata."""
    path = next((corpus / "inspect_ai_eval_log").glob("*.eval"))
    out = io.BytesIO()
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as eval_:
        for info in source.infolist():
            content = source.read(info)
            if info.filename.startswith("samples/"):
                sample = orjson.loads(content)
                sample.setdefault("metadata", {}).update(
                    {"note": planted_shapes_text(), "api_key": NAME_SECRETS["x-auth-token"]}
                )
                content = orjson.dumps(sample)
            eval_.writestr(info.filename, content)
    return out.getvalue()


def holding_anywhere(client: Client, traces, secrets) -> dict[str, list[str]]:
    """Where each secret is found: database, storage (all unpacked), pages of the traces."""
    pages = {}
    for trace in traces:
        base = f"/traces/{trace.pk}/"
        urls = [base, base + "postmortem", base + "export.md", base + "export.html"]
        urls += [base + "diagram.json", f"/api/traces/{trace.pk}", base + "download"]
        for call in trace.calls.values_list("index", flat=True):
            urls += [f"{base}calls/{call}/", f"{base}calls/{call}/request.json"]
        for url in urls:
            response = client.get(url)
            assert response.status_code == 200, url
            pages[url] = response.content
    stored = _stored_readings()
    found = {}
    for secret in secrets:
        needle = secret.encode()
        places = [name for name, texts in stored.items() if any(needle in t for t in texts)]
        places += [url for url, content in pages.items() if needle in content]
        if places:
            found[secret] = places
    return found


def _stored_readings() -> dict[str, list[bytes]]:
    """Every value in the database and every object in storage, in all its readings."""
    readings: dict[str, list[bytes]] = {}
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            columns = [c[0] for c in cursor.description]
            for row in cursor.fetchall():
                for column, value in zip(columns, row, strict=True):
                    readings.setdefault(f"{table}.{column}", []).extend(_readings(value))

    def walk(prefix: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            folders, files = originals.storage().listdir(prefix)
            for name in files:
                readings[f"{prefix}/{name}"] = _readings(originals.get(f"{prefix}/{name}"))
            for folder in folders:
                walk(f"{prefix}/{folder}")

    walk("originals")
    return readings


def _upload(client: Client, data: bytes, filename: str, **query) -> models.Trace:
    params = "&".join(f"{k}={v}" for k, v in {"project": "alpha", **query}.items())
    response = client.post(
        f"/api/traces?{params}",
        {"file": ContentFile(data, name=filename)},
    )
    assert response.status_code == 201, response.content
    return models.Trace.objects.get(pk=response.json()["id"])


@pytest.mark.corpus
@pytest.mark.parametrize("encoding", ["plain", "gzip"])
def test_every_planted_shape_is_nowhere_in_a_shared_mode_trace(shared, corpus, encoding):
    client = shared.clients["member"]
    files = [("planted.jsonl", planted_every_shape(corpus)), ("vcr.yaml", planted_cassette(corpus))]
    uploaded = []
    for filename, data in files:
        if encoding == "gzip":
            filename, data = filename + ".gz", gzip.compress(data)
        uploaded.append(_upload(client, data, filename))
    jsonl, cassette = uploaded
    assert jsonl.calls_count >= 3 and cassette.calls_count >= 1
    assert jsonl.redacted["x-amz-security-token"] >= 3 and "JWT" in jsonl.redacted
    assert cassette.redacted["x-api-key"] >= 1
    assert holding_anywhere(client, uploaded, ALL_SECRETS) == {}
    # What was stored is the decoded text, its lines as they came.
    stored = client.get(f"/traces/{jsonl.pk}/download").content
    assert stored.count(b"\n") == files[0][1].count(b"\n")


@pytest.mark.corpus
def test_every_planted_shape_is_nowhere_after_an_eval_upload(shared, corpus):
    client = shared.clients["member"]
    trace = _upload(client, planted_eval(corpus), "planted.eval")
    assert trace.calls_count >= 1 and trace.redacted["JWT"] >= 1
    secrets = [*SHAPE_SECRETS.values(), NAME_SECRETS["x-auth-token"]]
    assert holding_anywhere(client, [trace], secrets) == {}


@pytest.mark.corpus
def test_every_planted_shape_is_nowhere_in_a_run_set_and_its_kept_archive(shared, corpus):
    client = shared.clients["member"]
    bundle = io.BytesIO()
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as archive_:
        archive_.writestr("planted.jsonl", planted_every_shape(corpus))
        archive_.writestr("vcr.yaml.gz", gzip.compress(planted_cassette(corpus)))
    response = client.post(
        "/api/traces?project=alpha&set=planted%20set",
        {"file": ContentFile(bundle.getvalue(), name="bundle.zip")},
    )
    assert response.status_code in (200, 201), response.content
    run_set = models.RunSet.objects.get(name="planted set")
    traces = list(run_set.runs.all())
    assert len(traces) == 2 and all(trace.redacted for trace in traces)
    assert run_set.files.count() == 1  # the archive is kept, redacted
    kept = originals.set_file_bytes(run_set.files.get())
    with zipfile.ZipFile(io.BytesIO(kept)) as archive_:
        assert sorted(archive_.namelist()) == ["planted.jsonl", "vcr.yaml"]
    assert holding_anywhere(client, traces, ALL_SECRETS) == {}
    again = set_upload(
        name="planted set", files=[("bundle.zip", bundle.getvalue())], project=shared.alpha
    )
    assert again.duplicates == ["bundle.zip"] and again.added == []  # recognised, though redacted
    assert run_set.files.count() == 1 and run_set.runs.count() == 2


@pytest.mark.corpus
def test_every_planted_shape_is_nowhere_in_a_shared_live_trace(shared, corpus):
    trace = create_live_trace(name="live planted", project=shared.alpha)
    lines = planted_every_shape(corpus).splitlines(keepends=True)
    append_lines(trace_id=trace.pk, offset=0, lines=lines[:3])
    append_lines(trace_id=trace.pk, offset=3, lines=lines[3:])
    trace.refresh_from_db()
    assert trace.lines_total == len(lines) and trace.redacted["x-auth-token"] == len(lines)
    stored = _stored_readings()
    pages = [shared.clients["member"].get(url).content for url in (f"/traces/{trace.pk}/",)]
    for secret in ALL_SECRETS:
        needle = secret.encode()
        assert not [name for name, texts in stored.items() if any(needle in t for t in texts)]
        assert not [page for page in pages if needle in page]


def test_redaction_changes_only_the_secret_spans():
    data = (
        b'{"headers": {"Authorization": "Bearer abc.def-123456789", "x-api-key": "k\\"ey"}, '
        b'"body": {"text": "my key is sk-proj-0123456789abcdefghij ok"}}\n'
        b"  authorization: Bearer sk-ant-0123456789abcdefgh\n"
        b"plain line\n"
    )
    result = redact(data)
    assert result.data == (
        b'{"headers": {"Authorization": "[redacted]", "x-api-key": "[redacted]"}, '
        b'"body": {"text": "my key is [redacted] ok"}}\n'
        b"  authorization: [redacted]\n"
        b"plain line\n"
    )
    assert result.fields == {"authorization": 2, "x-api-key": 1, "sk- API key": 1}
    assert orjson.loads(result.data.splitlines()[0])  # still JSON


def test_local_mode_keeps_originals_byte_identical(db):
    lines = [orjson.loads(line) for line in agent_lines(2)]
    lines[1]["headers"] = {"x-api-key": PLANTED}
    data = ndjson([orjson.dumps(line) for line in lines])
    trace = trace_upload(files=[("t.jsonl", data)], name="local").trace
    assert trace.redacted == {}
    assert originals.chunk_bytes(trace.chunks.get()) == data


def system_prompt_lines(system: str, question: str) -> bytes:
    lines = [orjson.loads(line) for line in agent_lines(2)]
    for line in lines:
        if line.get("type") == "request":
            line["body"]["system"] = system
            line["body"]["messages"][0]["content"] = question
    return ndjson([orjson.dumps(line) for line in lines])


def test_deleting_a_trace_keeps_blobs_another_trace_uses(db):
    system = "You are a careful research agent. " * 20
    first = trace_upload(files=[("", system_prompt_lines(system, "first?"))], name="a").trace
    second = trace_upload(files=[("", system_prompt_lines(system, "second?"))], name="b").trace
    shared_digest = first.calls.get(index=1).system_digest
    assert shared_digest == second.calls.get(index=1).system_digest
    only_first = set(first.calls.get(index=1).appended_digests) - set(
        second.calls.get(index=1).appended_digests
    )
    assert only_first
    blobs_before = models.Blob.objects.count()

    removed = trace_delete(trace=first, who="test")
    assert removed > 0
    assert models.Blob.objects.count() == blobs_before - removed
    assert models.Blob.objects.filter(digest=shared_digest).exists()
    assert not models.Blob.objects.filter(digest__in=only_first).exists()
    # The surviving trace still shows every request in full.
    response = Client().get(f"/traces/{second.pk}/calls/1/request.json")
    assert response.json()["system"] == system

    trace_delete(trace=second, who="test")
    assert not models.Blob.objects.filter(digest=shared_digest).exists()
    assert models.Blob.objects.count() == 0
    assert models.AuditEvent.objects.filter(action="trace.delete").count() == 2


def test_delete_page_and_api(shared):
    trace = shared.trace
    assert shared.clients["viewer"].post(f"/traces/{trace.pk}/delete").status_code == 403
    response = shared.clients["member"].post(f"/traces/{trace.pk}/delete")
    assert response.status_code == 302 and not models.Trace.objects.filter(pk=trace.pk).exists()
    other = trace_upload(
        files=[("", ndjson(agent_lines(2)))], name="other", project=shared.alpha
    ).trace
    response = Client().delete(
        f"/api/traces/{other.pk}",
        HTTP_AUTHORIZATION=shared.headers("ingest_token")["HTTP_AUTHORIZATION"],
    )
    assert response.status_code == 200 and response.json()["deleted"] is True
    event = models.AuditEvent.objects.filter(action="trace.delete").first()
    assert "ingest_token" in event.actor and event.project == shared.alpha


def test_purge_deletes_traces_past_their_projects_retention(shared, capsys):
    old = trace_upload(files=[("", ndjson(agent_lines(2)))], name="old", project=shared.alpha)
    models.Trace.objects.filter(pk=old.trace.pk).update(
        created_at=timezone.now() - timedelta(days=40)
    )
    keep = trace_upload(files=[("", ndjson(agent_lines(2)))], name="kept", project=shared.beta)
    models.Trace.objects.filter(pk=keep.trace.pk).update(
        created_at=timezone.now() - timedelta(days=400)
    )
    call_command("purge")  # no project has a retention period yet
    assert models.Trace.objects.filter(pk=old.trace.pk).exists()
    shared.alpha.retention_days = 30
    shared.alpha.save()
    call_command("purge", "--dry-run")
    assert models.Trace.objects.filter(pk=old.trace.pk).exists()
    call_command("purge")
    assert not models.Trace.objects.filter(pk=old.trace.pk).exists()
    assert models.Trace.objects.filter(pk=shared.trace.pk).exists()  # recent
    assert models.Trace.objects.filter(pk=keep.trace.pk).exists()  # beta keeps traces
    assert "1 trace(s) purged" in capsys.readouterr().out
    event = models.AuditEvent.objects.get(action="trace.delete")
    assert event.actor == "manage.py purge" and event.detail["reason"] == "retention"


def test_the_audit_log_records_uploads_tokens_and_share_links(shared):
    actions = set(models.AuditEvent.objects.values_list("action", flat=True))
    assert {"token.create", "share.create"} <= actions
    shared.clients["member"].post(
        "/api/traces?project=alpha", ndjson(agent_lines(2)), content_type="text/plain"
    )
    upload = models.AuditEvent.objects.get(action="trace.upload")
    assert upload.user == shared.users["member"] and upload.project == shared.alpha
    page = shared.clients["owner"].get("/projects/alpha/")
    assert page.status_code == 200 and b"trace.upload" in page.content
    assert shared.clients["member"].get("/projects/alpha/").status_code == 403
    assert Principal(user=shared.users["member"]).label == "member"


def test_ingest_command_takes_a_project(shared, tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_bytes(ndjson(agent_lines(2)))
    call_command("ingest", str(path), "--project", "beta", stdout=io.StringIO())
    assert models.Trace.objects.get(name="run.jsonl").project == shared.beta
    with pytest.raises(CommandError, match="No project called nowhere"):
        call_command("ingest", str(path), "--project", "nowhere")


@pytest.mark.django_db(transaction=True)
def test_a_delete_during_an_upload_of_the_same_prompt_keeps_the_blob():
    """The upload reuses the deleted trace's system prompt and commits while the delete
    runs: the delete waits for it and keeps the blob."""
    system = "You are a careful research agent. " * 20
    first = trace_upload(files=[("", system_prompt_lines(system, "first?"))], name="a").trace
    shared_digest = first.calls.get(index=1).system_digest
    uploading = threading.Event()
    outcome = {}

    def upload() -> None:
        try:
            with transaction.atomic():
                outcome["trace"] = trace_upload(
                    files=[("", system_prompt_lines(system, "second?"))], name="b"
                ).trace
                uploading.set()
                time.sleep(1.5)  # still uncommitted while the delete starts
        finally:
            uploading.set()
            connections.close_all()

    def delete() -> None:
        try:
            uploading.wait(30)
            started = time.monotonic()
            trace_delete(trace=first, who="test")
            outcome["waited"] = time.monotonic() - started
        finally:
            connections.close_all()

    threads = [threading.Thread(target=upload), threading.Thread(target=delete)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert outcome["waited"] >= 0.5  # it waited for the upload's commit
    assert models.Blob.objects.filter(digest=shared_digest).exists()
    response = Client().get(f"/traces/{outcome['trace'].pk}/calls/1/request.json")
    assert response.json()["system"] == system


@pytest.mark.django_db(transaction=True)
def test_two_uploads_of_the_same_prompt_do_not_wait_for_each_other():
    """An open ingest holds its blobs with a shared lock (PostgreSQL: KEY SHARE), so an
    ingest reusing them goes on at once (an exclusive lock made them queue and deadlock)."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has one writer at a time: only PostgreSQL's row locks apply")
    system = "You are a careful research agent. " * 20
    trace_upload(files=[("", system_prompt_lines(system, "first?"))], name="a")
    holding = threading.Event()
    release = threading.Event()

    def slow_upload() -> None:
        try:
            with transaction.atomic():
                trace_upload(files=[("", system_prompt_lines(system, "second?"))], name="b")
                holding.set()
                release.wait(30)  # uncommitted, its blobs locked, while the other runs
        finally:
            holding.set()
            connections.close_all()

    thread = threading.Thread(target=slow_upload)
    thread.start()
    try:
        assert holding.wait(30)
        started = time.monotonic()
        third = trace_upload(files=[("", system_prompt_lines(system, "third?"))], name="c")
        assert time.monotonic() - started < 1.0
    finally:
        release.set()
        thread.join(60)
    assert third.trace.calls.get(index=1).system_digest
