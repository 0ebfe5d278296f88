"""A session kept as a folder is one trace: a ZIP of it uploaded, `analyze DIR`, `ingest DIR`.

The real OpenHands v1 conversation of ../shared/agents (base_state.json + 8 event files,
counted 3 calls, 2 tool calls, 2 results on its anchor) is zipped here as a user would
zip the folder, in a shuffled member order, with the macOS metadata Finder adds.
"""

from __future__ import annotations

import io
import json
import random
import zipfile

import pytest
from django.core.management import call_command

from tests.conftest import AGENTS
from traces import models
from traces.core.analysis.ingest import analyze_bytes, analyze_files
from traces.core.outputs.report import build_report
from traces.core.reading.folders import archive_members, folder_files
from traces.core.reading.limits import DEFAULT_LIMITS, InputRejected
from traces.services.upload import trace_upload

FOLDER = AGENTS / "openhands_sdk_conversations" / "cd94562403b9487ebdd4018e3f531dfd"


@pytest.fixture
def folder(agents):
    return FOLDER


def _zip_of(folder, shuffle: bool = True) -> bytes:
    files = folder_files(folder)
    if shuffle:
        random.Random(7).shuffle(files)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{folder.name}/", b"")
        for name, data in files:
            archive.writestr(f"{folder.name}/{name}", data)
        archive.writestr(f"__MACOSX/{folder.name}/._base_state.json", b"\0\5\26\7")
    return buffer.getvalue()


def _figures(report) -> tuple[int, int]:
    return report["totals"]["calls"], len(report["tool_runs"])


def test_a_zip_of_a_session_folder_is_read_as_its_files(folder):
    data = _zip_of(folder)
    members = archive_members(data, DEFAULT_LIMITS)
    assert members is not None and len(members) == 9
    assert not any("__MACOSX" in name for name, _ in members)
    from_zip = build_report(analyze_bytes(data, filename="conversation.zip"))
    from_files = build_report(analyze_files(folder_files(folder)))
    assert _figures(from_zip) == _figures(from_files) == (3, 2)
    assert from_zip["format"] == "openhands-sdk"


def test_an_empty_zip_is_refused_with_the_reason():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("folder/", b"")
    with pytest.raises(InputRejected, match="no file with content"):
        analyze_bytes(buffer.getvalue(), filename="empty.zip")


def test_analyze_reads_a_folder_as_one_trace(folder, capsysbinary):
    call_command("analyze", str(folder), "--json")
    report = json.loads(capsysbinary.readouterr().out)
    assert _figures(report) == (3, 2)


@pytest.mark.django_db
def test_ingest_stores_a_folder_as_one_trace_and_keeps_each_file(folder, capsys):
    call_command("ingest", str(folder))
    trace = models.Trace.objects.get()
    assert trace.calls_count == 3 and trace.format == "openhands-sdk"
    assert trace.chunks.count() == 9  # every file kept, each downloadable
    assert f"/traces/{trace.pk}/" in capsys.readouterr().out


@pytest.mark.django_db
def test_an_uploaded_zip_keeps_the_archive_and_reanalyses_the_same(folder):
    data = _zip_of(folder)
    trace = trace_upload(files=[("conversation.zip", data)], name="zipped").trace
    assert trace.calls_count == 3 and trace.format == "openhands-sdk"
    from traces.selectors.traces import trace_source_bytes
    from traces.services.ingest import trace_reanalyze

    assert trace_source_bytes(trace=trace) == data  # the original, byte-identical
    assert len(trace_reanalyze(trace=trace).core.calls) == 3
