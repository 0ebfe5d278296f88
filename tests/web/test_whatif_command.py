"""`manage.py whatif FILE --cap TOOL=N --clear-after K` and `analyze --json`'s what_if."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.core.whatif.traces import calendar_serial, sundry_run


@pytest.fixture
def sundry_file(tmp_path):
    path = tmp_path / "sundry.jsonl"
    path.write_bytes(sundry_run())
    return path


def test_whatif_prints_the_table(sundry_file, capsys):
    call_command("whatif", str(sundry_file), "--cap", "get_order=340", "--clear-after", "3")
    out = capsys.readouterr().out
    assert "caps get_order=340 · clear after 3 · 5-minute cache lifetime" in out
    assert "get_order: cap 340 (median 900, largest 900): 8,100 → 3,060 tokens, $0.015" in out
    assert "cap get_order at 340 tokens: saves 5,040 input tokens, $0.015 on this run" in out
    assert "call times not recorded" in out  # the cache scenario says why it has no figure


def test_whatif_json_carries_the_parameters(sundry_file, capsysbinary):
    call_command(
        "whatif", str(sundry_file), "--cap", "get_order=340", "--cache-lifetime", "1h", "--json"
    )
    what_if = json.loads(capsysbinary.readouterr().out)
    assert what_if["parameters"]["caps"] == {"get_order": 340}
    assert what_if["parameters"]["cache_lifetime"] == "1h"


def test_whatif_refuses_a_bad_cap(sundry_file):
    with pytest.raises(CommandError, match="TOOL=N"):
        call_command("whatif", str(sundry_file), "--cap", "get_order")
    with pytest.raises(CommandError, match="K >= 1"):
        call_command("whatif", str(sundry_file), "--clear-after", "0")


def test_analyze_json_carries_what_if(tmp_path, capsysbinary):
    path = tmp_path / "calendar-serial.jsonl"
    path.write_bytes(calendar_serial())
    call_command("analyze", str(path), "--json")
    report = json.loads(capsysbinary.readouterr().out)
    batch = next(s for s in report["what_if"]["scenarios"] if s["id"] == "batch-serial-calls")
    assert (batch["tokens_before"], batch["tokens_after"]) == (7_780, 6_160)
    assert report["what_if"]["inputs"]["prices"]["claude-sonnet-4-5"]["input"] == 3.0
