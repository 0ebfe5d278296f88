"""A mapping file through every way in (API, upload form, CLI commands, re-analysis), and
the message a file no format claims gets through the API and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from traces import models

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "mapping-examples"
CHAT_LOG = EXAMPLES / "chat-log.jsonl"
CHAT_MAPPING = EXAMPLES / "chat-log.mapping.yaml"
HOMEGROWN = b'{"step": 1, "llm": {"said": "hi"}, "tokens": 12}\n{"step": 2, "tool": "grep"}\n'


def _api(client, **fields):
    return client.post(reverse("traces:api-traces"), fields)


@pytest.mark.django_db
def test_api_takes_a_mapping_file_field(client):
    reply = _api(
        client,
        file=SimpleUploadedFile("chat-log.jsonl", CHAT_LOG.read_bytes()),
        mapping=SimpleUploadedFile("chat-log.mapping.yaml", CHAT_MAPPING.read_bytes()),
    )
    assert reply.status_code == 201, reply.content
    body = reply.json()
    assert (body["format"], body["calls"]) == ("mapping", 3)
    report = client.get(reverse("traces:api-trace", args=[body["id"]])).json()
    assert report["mapping"]["name"] == "room-booker log"
    assert [r["status"] for r in report["tool_runs"]] == ["paired", "paired"]


@pytest.mark.django_db
def test_api_takes_the_mapping_text_and_says_what_is_wrong_with_it(client):
    reply = _api(
        client,
        file=SimpleUploadedFile("chat-log.jsonl", CHAT_LOG.read_bytes()),
        mapping=CHAT_MAPPING.read_text(),
    )
    assert reply.status_code == 201
    bad = _api(
        client,
        file=SimpleUploadedFile("chat-log.jsonl", CHAT_LOG.read_bytes()),
        mapping="calls:\n  wher: kind == 'llm'\n",
    )
    assert bad.status_code == 400
    assert "calls.wher (line 2)" in bad.json()["error"]


@pytest.mark.django_db
def test_api_refusal_describes_the_file_and_suggests_a_way_in(client):
    reply = _api(client, file=SimpleUploadedFile("mine.jsonl", HOMEGROWN))
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error.startswith("No supported trace format recognised this file.")
    assert "record 1 is an object with keys step (number), llm (object), tokens (number)" in error
    assert "--format NAME" in error and "mapping" in error


@pytest.mark.django_db
def test_refusal_names_the_closest_formats_and_what_they_missed(client):
    almost_openhands = [{"id": 1, "source": "agent", "timestamp": "2025-01-01T00:00:00"}]
    reply = _api(client, file=SimpleUploadedFile("x.json", orjson.dumps(almost_openhands)))
    error = reply.json()["error"]
    assert "OpenHands event stream (openhands-events): has id, timestamp, source" in error
    assert "but not action, observation, tool_call_metadata" in error


@pytest.mark.django_db
def test_upload_form_takes_a_mapping(client):
    reply = client.post(
        reverse("traces:upload"),
        {
            "file": SimpleUploadedFile("chat-log.jsonl", CHAT_LOG.read_bytes()),
            "mapping": SimpleUploadedFile("m.yaml", CHAT_MAPPING.read_bytes()),
        },
    )
    assert reply.status_code == 302
    assert models.Trace.objects.get().format == "mapping"
    page = client.get(reverse("traces:list"))
    assert b'name="mapping"' in page.content


def test_cli_analyze_with_a_mapping(capsysbinary):
    call_command("analyze", str(CHAT_LOG), "--mapping", str(CHAT_MAPPING), "--json")
    report = json.loads(capsysbinary.readouterr().out)
    assert report["format"] == "mapping" and report["totals"]["calls"] == 3


def test_cli_lint_and_report_with_a_mapping(tmp_path, capsys):
    call_command("lint", str(CHAT_LOG), "--mapping", str(CHAT_MAPPING), "--fail-on", "never")
    assert "chat-log.jsonl: 0 finding(s)" in capsys.readouterr().out
    markdown = tmp_path / "pm.md"
    call_command("report", str(CHAT_LOG), "--mapping", str(CHAT_MAPPING), "--md", str(markdown))
    text = markdown.read_text()
    assert "Format `mapping`" in text and "error: Vega is under maintenance" in text


def test_cli_says_which_mapping_line_is_wrong(tmp_path):
    mapping = tmp_path / "m.yaml"
    mapping.write_text('calls:\n  where: "kind =="\n')
    with pytest.raises(CommandError, match=r"line 2: calls\.where is not a valid JMESPath"):
        call_command("analyze", str(CHAT_LOG), "--mapping", str(mapping))


def test_cli_refusal_describes_the_file(tmp_path, capsys):
    path = tmp_path / "mine.jsonl"
    path.write_bytes(HOMEGROWN)
    with pytest.raises(CommandError):
        call_command("analyze", str(path))
    err = capsys.readouterr().err
    assert "record 2 is an object with keys step (number), tool (text)" in err
    assert "--mapping FILE" in err


@pytest.mark.django_db
def test_ingest_and_reanalyze_keep_the_mapping(capsys):
    call_command("ingest", str(CHAT_LOG), "--mapping", str(CHAT_MAPPING))
    trace = models.Trace.objects.get()
    assert trace.format == "mapping" and trace.calls_count == 3
    trace.report = {**trace.report, "totals": {}}
    trace.save()
    call_command("reanalyze")
    trace.refresh_from_db()
    assert trace.report["totals"]["calls"] == 3
    assert trace.report["mapping"]["spec"]["calls"]["where"] == "kind == 'llm'"


@pytest.mark.django_db
def test_api_reads_a_text_log_with_a_line_pattern_and_reanalysis_keeps_it(client):
    reply = _api(
        client,
        file=SimpleUploadedFile("agent.log", (EXAMPLES / "agent.log").read_bytes()),
        mapping=SimpleUploadedFile("m.yaml", (EXAMPLES / "agent-log.mapping.yaml").read_bytes()),
    )
    assert reply.status_code == 201, reply.content
    assert reply.json()["calls"] == 3
    call_command("reanalyze")
    trace = models.Trace.objects.get()
    assert trace.report["totals"]["calls"] == 3
    assert [r["id"] for r in trace.report["tool_runs"]] == ["log:1.1", "log:3.1"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "mapping, fragment",
    [
        (
            "lines:\n  pattern: '(?P<a>(x+)+)'\ncalls:\n  where: a\n",
            "line 2: lines.pattern is refused: it repeats a repeat",
        ),
        ("dedupe: {keep: first}\ncalls:\n  where: a\n", "dedupe (line 1)"),
        (
            "calls:\n  where: a\n  model: from_jsn(m)\n",
            "line 3: calls.model calls from_jsn(), which is no JMESPath function",
        ),
    ],
)
def test_api_refuses_a_malformed_mapping_naming_the_key(client, mapping, fragment):
    reply = _api(
        client,
        file=SimpleUploadedFile("agent.log", (EXAMPLES / "agent.log").read_bytes()),
        mapping=mapping,
    )
    assert reply.status_code == 400
    assert fragment in reply.json()["error"]
    assert not models.Trace.objects.exists()
