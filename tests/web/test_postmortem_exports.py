"""Post-mortem page, Markdown and HTML exports, finding permalinks, the report command."""

from __future__ import annotations

from xml.etree import ElementTree

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from tests.golden import assert_golden
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.export_md import code, render_markdown
from traces.core.outputs.postmortem import build_postmortem
from traces.core.outputs.report import build_report

pytestmark = pytest.mark.django_db

HOSTILE = '<script>window.pwned=1</script>`x`<img src=x onerror="window.pwned=2">'


def broken_log() -> bytes:
    """A loop whose tool result answers the wrong id, then halts on tool_use."""
    q = [user("book a room " + HOSTILE)]
    r1 = response([tool_use("t1", name="find_room", day="mon")], "tool_use")
    echo = {"role": "assistant", "content": r1["content"]}
    results = {"role": "user", "content": [tool_result("t1 ", "Traceback: " + HOSTILE, True)]}
    r2 = response([tool_use("t2", name="book", room="R1")], "tool_use")
    return log(pair(q, r1), pair([*q, echo, results], r2))


def upload(client, data: bytes) -> str:
    reply = client.post(
        reverse("traces:api-traces"), {"file": SimpleUploadedFile("broken.jsonl", data)}
    )
    assert reply.status_code == 201
    return reply.json()["id"]


def test_postmortem_names_the_outcome_and_the_first_error(client):
    trace_id = upload(client, broken_log())
    html = client.get(reverse("traces:postmortem", args=[trace_id])).content.decode()
    assert "Halted on tool_use" in html
    assert "Where it first went wrong" in html
    assert "dangling-tool-call" in html and "orphan-tool-result" in html
    assert "<script>window.pwned" not in html


def test_markdown_export_is_golden_and_safe():
    report = build_report(analyze_bytes(broken_log()))
    text = render_markdown(build_postmortem(report, "broken.jsonl"), "http://x/traces/1/")
    assert_golden("exports/broken.postmortem.md.json", text.splitlines())
    # Untrusted text only inside code spans whose fence outruns its backticks.
    assert code("a`b") == "``a`b``" and code("`x`") == "`` `x` ``"


def test_markdown_export_served(client):
    trace_id = upload(client, broken_log())
    reply = client.get(reverse("traces:export-md", args=[trace_id]))
    assert reply["Content-Type"].startswith("text/markdown")
    assert "# Post-mortem" in reply.content.decode()


def test_html_export_is_self_contained(client):
    trace_id = upload(client, broken_log())
    reply = client.get(reverse("traces:export-html", args=[trace_id]))
    html = reply.content.decode()
    assert "attachment" in reply["Content-Disposition"]
    assert "<script" not in html.lower()
    assert "<link" not in html.lower() and "src=" not in html.replace("src=x", "")
    assert "<svg" in html and "<style>" in html
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in html
    svg = html[html.index("<svg") : html.index("</svg>") + 6]
    ElementTree.fromstring(svg)  # well-formed, escaped


def test_finding_permalinks_redirect_to_the_call(client):
    trace_id = upload(client, broken_log())
    report = client.get(reverse("traces:api-trace", args=[trace_id])).json()
    number = next(i for i, f in enumerate(report["findings"], 1) if f["call"] == 2)
    reply = client.get(reverse("traces:finding", args=[trace_id, number]))
    assert reply.status_code == 302
    assert reply["Location"].endswith(f"/calls/2/#finding-{number}")
    assert client.get(reverse("traces:finding", args=[trace_id, 999])).status_code == 404
    call_page = client.get(reply["Location"].split("#")[0]).content.decode()
    assert f'id="finding-{number}"' in call_page


def test_report_command_writes_html_and_markdown(tmp_path):
    source = tmp_path / "broken.jsonl"
    source.write_bytes(broken_log())
    html, md = tmp_path / "out.html", tmp_path / "out.md"
    call_command("report", str(source), "--html", str(html), "--md", str(md))
    assert "<svg" in html.read_text() and "<script" not in html.read_text().lower()
    assert md.read_text().startswith("# Post-mortem")
