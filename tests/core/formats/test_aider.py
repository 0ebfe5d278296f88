"""aider's text logs: the Markdown chat history (`aider-chat`) and the `--llm-history-file`
log (`aider-llm-history`), read as text records; text files no format claims stay JSONL.

Corpus facts (../shared/agents/aider_history, SOURCES.md section 20, re-counted with grep):
the aider author's history has 1,133 runs and 839 `> Tokens:` lines (= calls); the
zen-mcp-server history has 4 runs and no reply. The golden inputs are small files written
by hand following the real files' shape (aider-chat: the lines of the two corpus files;
aider-llm-history: aider's `io.log_llm_history` and `utils.format_messages`, no real file
being shareable).
"""

from __future__ import annotations

import pytest

from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes, analyze_files
from traces.core.outputs.report import build_report
from traces.core.reading.formats.detect import detect
from traces.core.reading.limits import InputRejected, NotATrace
from traces.core.reading.records import Record, numbered_items
from traces.core.reading.sources import read_source

FOLDER = "aider_history"
BIG = "aider_tests-fixtures_chat-history.md"
ZEN = "zen-mcp-server_.aider.chat.history.md"

HISTORY = (
    b"\n# aider chat started at 2024-08-05 19:33:32\n\n"
    b"> Aider v0.47.2-dev  \n"
    b"> Model: gpt-4o-mini with whole edit format  \n\n"
    b"#### hi  \n\n"
    b"Hello!\n\n"
    b"> Tokens: 1.2k sent, 12 received. Cost: $0.0002 message, $0.0002 session.  \n"
)


# -- corpus -----------------------------------------------------------------------------
@pytest.mark.corpus
def test_authors_history_makes_one_call_per_tokens_line(agents):
    path = agents / FOLDER / BIG
    trace = analyze_bytes(path.read_bytes(), filename=path.name)
    assert trace.format == "aider-chat"
    assert len(trace.calls) == 839
    assert not trace.tool_runs and not trace.line_errors
    assert all(c.tokens_estimated and c.usage is not None for c in trace.calls)
    first = trace.calls[0]
    # the first reply of the file: "Use the Spinner instead of the inlined custom spinner"
    assert first.model == "claude-3-5-sonnet-20240620"
    assert (first.usage.input_tokens, first.usage.output_tokens) == (5244, 604)
    assert first.extra["applied_edits"] == ["aider/utils.py"]
    assert first.extra["commits"][0]["sha"] == "fd43cd4"
    assert first.extra["run"]["started"] == "2024-08-05 19:33:32"
    assert first.extra["agent_session"] == {"agent": "aider"}
    assert "<<<<<<< SEARCH" in first.response.blocks[0].text
    assert trace.calls[1].model == "gpt-4o-mini"


@pytest.mark.corpus
def test_history_with_runs_but_no_reply_is_recognised_and_said(agents):
    path = agents / FOLDER / ZEN
    with pytest.raises(NotATrace) as notice:
        analyze_bytes(path.read_bytes(), filename=path.name)
    assert "aider-chat" in str(notice.value) and "4 run(s)" in str(notice.value)
    assert "no model reply" in str(notice.value)


@pytest.mark.corpus
def test_history_files_are_detected_only_as_aider(agents):
    for name in (BIG, ZEN):
        source = read_source((agents / FOLDER / name).read_bytes(), name)
        assert source.layout == "text"
        values = [item.value for item in source.items[:20] if isinstance(item, Record)]
        assert detect(values).adapter.name == "aider-chat"


# -- golden -----------------------------------------------------------------------------
def test_chat_history_report_matches_golden():
    """Two runs: two metered replies with their edits and commits, a command, a multi-line
    input, an interrupted reply, a /clear and a reply with no cost."""
    trace = analyze_bytes(golden_input("aider-chat/session.history.md"))
    assert trace.format == "aider-chat"
    assert [c.message_count for c in trace.calls] == [1, 3, 1]
    second = trace.calls[1]
    assert second.usage.cache_read_tokens == 1024 and second.usage.input_tokens == 2410 - 1024
    assert trace.calls[2].extra["chat_cleared"] is True
    assert trace.calls[2].model == "gpt-4o-mini"
    assert_golden("aider-chat/session.history.report.json", build_report(trace))


def test_llm_history_report_matches_golden():
    """Two answered TO LLM blocks and a last one the log cut before its response."""
    trace = analyze_bytes(golden_input("aider-llm-history/session.llm.history"))
    assert trace.format == "aider-llm-history"
    assert [c.status for c in trace.calls] == ["ok", "ok", "error"]
    first = trace.calls[0]
    assert first.message_count == 4
    assert first.ended_at - first.started_at == 6
    assert first.system.startswith("Act as an expert software developer.\nAlways")
    assert "no LLM RESPONSE" in trace.calls[2].error
    assert_golden("aider-llm-history/session.llm.history.report.json", build_report(trace))


# -- reading ----------------------------------------------------------------------------
def test_usage_is_read_from_rounded_figures_and_marked_estimated():
    (call,) = analyze_bytes(HISTORY).calls
    assert (call.usage.input_tokens, call.usage.output_tokens) == (1200, 12)
    assert call.tokens_estimated
    assert call.extra["cost_usd"] == 0.0002
    assert call.extra["aider_tokens"].startswith("Tokens: 1.2k sent")


def test_multi_line_input_is_one_user_message_and_commands_send_nothing():
    data = (
        b"# aider chat started at 2024-01-01 10:00:00\n\n#### /add a.py  \n\n"
        b"#### first line  \n####   \n#### second line  \n\nok\n\n> Tokens: 10 sent, 1 received.  \n"
    )
    (call,) = analyze_bytes(data).calls
    assert call.message_count == 1
    report = build_report(analyze_bytes(data))
    assert report["totals"]["calls"] == 1


def test_reply_without_tokens_line_is_no_call_but_stays_in_the_transcript():
    data = (
        b"# aider chat started at 2024-01-01 10:00:00\n\n#### one  \n\ncut off\n\n"
        b">  \n> ^C KeyboardInterrupt  \n\n#### two  \n\nfine\n\n> Tokens: 10 sent, 1 received.  \n"
    )
    (call,) = analyze_bytes(data).calls
    assert call.message_count == 3  # one, the cut reply, two


def test_runs_are_separate_loops():
    data = HISTORY + HISTORY.replace(b"19:33:32", b"20:00:00")
    trace = analyze_bytes(data)
    assert [c.message_count for c in trace.calls] == [1, 1]
    assert [c.extra["run"]["index"] for c in trace.calls] == [1, 2]


def test_history_uploaded_twice_in_one_trace_adds_both():
    trace = analyze_files([("a.md", HISTORY), ("b.md", HISTORY)])
    assert len(trace.calls) == 2


# -- malformed input --------------------------------------------------------------------
def test_bad_lines_are_reported_with_their_number_and_the_rest_read():
    data = HISTORY + (
        b"\n#### again  \n\nsure\n\xff\xfe broken\n\n> Tokens: lots sent, none received.  \n"
        b"\n#### third  \n\nyes\n\n> Tokens: 5 sent, 2 received.  \n"
    )
    trace = analyze_bytes(data)
    errors = {e.line: e.message for e in trace.line_errors}
    lines = data.split(b"\n")
    broken = lines.index(b"\xff\xfe broken") + 1
    tokens = lines.index(b"> Tokens: lots sent, none received.  ") + 1
    assert errors[broken].startswith("not valid UTF-8 text")
    assert "without 'sent' and 'received'" in errors[tokens]
    assert len(trace.calls) == 2
    assert trace.calls[1].usage.input_tokens == 5


def test_text_cut_mid_line_still_reads_what_came_before():
    cut = HISTORY + b"\n#### more  \n\npartial repl"
    trace = analyze_bytes(cut)
    assert len(trace.calls) == 1  # the cut reply has no Tokens line: no call


def test_llm_history_lines_without_a_role_are_reported():
    data = (
        b"TO LLM 2024-01-01T10:00:00\n-------\nUSER hi\nstray text\n"
        b"LLM RESPONSE 2024-01-01T10:00:02\nASSISTANT hello\nLLM RESPONSE 2024-01-01T10:00:03\n"
        b"TO LLM 2024-01-01T10:01:00\n-------\nUSER again\nLLM RESPONSE 2024-01-01T10:01:01\n"
        b"ASSISTANT ok\n"
    )
    trace = analyze_bytes(data)
    errors = {e.line: e.message for e in trace.line_errors}
    assert errors == {
        4: "a line with no role prefix (SYSTEM, USER, ASSISTANT…)",
        7: "an 'LLM RESPONSE' block with no 'TO LLM' block before it",
    }
    assert [c.status for c in trace.calls] == ["ok", "ok"]
    assert trace.calls[1].response.blocks[0].text == "ok"


def test_markdown_no_format_claims_is_still_read_as_jsonl_with_each_line_reported():
    data = b'# Notes\n\nSome text.\n{"a": 1}\n'
    assert read_source(data).layout == "jsonl"
    with pytest.raises(InputRejected):
        analyze_bytes(b"# Notes\n\nSome text.\n")


def test_plain_markdown_quotes_are_not_taken_for_aider_output():
    data = b"# Title\n\n> a quote\n> more\n\nbody text\n" * 3
    assert read_source(data).layout == "jsonl"


def test_live_lines_of_a_text_log_are_text_records():
    items = list(numbered_items([b"#### hi  \n", b"\n", b"\xff\n"], 5, text=True))
    assert items[0] == Record(5, "#### hi  ")
    assert items[1].line == 7 and "UTF-8" in items[1].message
