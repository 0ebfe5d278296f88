"""A session still being written is followed live: new lines reach an open viewer socket,
a restart appends nothing twice, and a quiet file's trace is closed like an upload."""

from __future__ import annotations

import os
import time

import pytest
from channels.db import database_sync_to_async

from tests.live.test_consumers import receive_frame, run, viewer
from traces import live, models
from traces.live.watch import watch_pass
from traces.services.upload import trace_upload

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_growing_session_shows_its_new_calls_live(tmp_path, corpus):
    source = (corpus / "claude_code_jsonl/spotter/tool_heavy.jsonl").read_bytes()
    lines = source.splitlines(keepends=True)
    home = tmp_path / "home"
    session = home / ".claude/projects/-work-spotter/growing.jsonl"
    session.parent.mkdir(parents=True)
    half = len(lines) // 3
    session.write_bytes(b"".join(lines[:half]) + lines[half][:10])  # a line half written
    run(_growing, home, session, lines, half)
    whole = trace_upload(files=[("whole.jsonl", source)], name="whole").trace
    trace = models.WatchedSession.objects.get(path=str(session)).trace
    assert (trace.state, trace.calls_count) == ("closed", whole.calls_count)
    assert trace.tool_runs_count == whole.tool_runs_count
    assert trace.lines_total == len(lines)


async def _growing(home, session, lines, half):
    passes = database_sync_to_async(watch_pass)
    first = await passes(home=home, env={})
    assert (first.imported, first.problems) == (1, [])
    row = await database_sync_to_async(models.WatchedSession.objects.get)(path=str(session))
    assert row.state == "live" and row.lines_sent == half  # the half line waits
    trace = await database_sync_to_async(models.Trace.objects.get)(pk=row.trace_id)
    assert trace.state == "live" and trace.agent == "Claude Code"
    calls_before = trace.calls_count
    watcher = await viewer(trace.pk)
    backlog = await receive_frame(watcher)
    assert {m["type"] for m in backlog} >= {"call"}
    with open(session, "ab") as handle:
        handle.write(lines[half][10:] + b"".join(lines[half + 1 :]))
    second = await passes(home=home, env={})
    assert second.appended_lines == len(lines) - half
    new_calls = []
    while len(new_calls) < 1:
        new_calls += [m for m in await receive_frame(watcher) if m["type"] == "call"]
    assert new_calls[0]["data"]["index"] > calls_before
    await watcher.disconnect()
    live.forget_sessions()  # a restart: the next pass appends nothing twice
    third = await passes(home=home, env={})
    assert (third.appended_lines, third.imported, third.replaced) == (0, 0, 0)
    old = time.time() - 3600
    os.utime(session, (old, old))  # the agent went quiet: the trace closes
    fourth = await passes(home=home, env={})
    assert fourth.closed == 1


def test_between_passes_the_live_sessions_alone_are_followed(tmp_path, corpus):
    """`follow_pass` appends a live session's new lines without listing any store (a
    document beside it, rewritten meanwhile, waits for the next full pass), and does
    nothing when no live file changed."""
    from traces.live.watch import follow_pass

    lines = (corpus / "claude_code_jsonl/spotter/tool_heavy.jsonl").read_bytes().splitlines(True)
    home = tmp_path / "home"
    session = home / ".claude/projects/-work-spotter/growing.jsonl"
    session.parent.mkdir(parents=True)
    session.write_bytes(b"".join(lines[:4]))
    document = home / ".continue/sessions/one.json"
    document.parent.mkdir(parents=True)
    document.write_bytes(
        (corpus.parent / "agents/continue_sessions/continue-debug")
        .glob("8*.json")
        .__next__()
        .read_bytes()
    )
    assert watch_pass(home=home, env={}).imported == 2
    assert follow_pass().found == 0  # nothing changed
    with open(session, "ab") as handle:
        handle.write(b"".join(lines[4:9]))
    document.write_bytes(document.read_bytes() + b"\n")
    followed = follow_pass(only=("claude-code",))
    assert (followed.found, followed.appended_lines, followed.replaced) == (1, 5, 0)
    row = models.WatchedSession.objects.get(path=str(session))
    assert (row.lines_sent, row.offset) == (9, session.stat().st_size)
    assert follow_pass(only=("codex",)).found == 0  # another store's sessions are not looked at
    assert models.WatchedSession.objects.get(path=str(document)).size != document.stat().st_size


def test_a_live_session_with_subagents_is_read_again_whole_when_it_ends(tmp_path, corpus):
    """Followed live, only the session's own file is appended; once it goes quiet its trace
    is replaced by a whole read with its subagents' files (one trace per session still)."""
    import shutil

    spotter = corpus / "claude_code_jsonl/spotter"
    session_id = "8463c716-a2ea-4c14-9efa-87158ebd9f20"
    project = tmp_path / "home/.claude/projects/-work-spotter"
    shutil.copytree(spotter / session_id, project / session_id)
    shutil.copyfile(spotter / f"{session_id}.jsonl", project / f"{session_id}.jsonl")
    first = watch_pass(home=tmp_path / "home", env={})
    row = models.WatchedSession.objects.get()
    assert (first.imported, row.state) == (1, "live")
    followed = models.Trace.objects.get(pk=row.trace_id)
    old = time.time() - 3600
    for path in project.rglob("*.jsonl"):
        os.utime(path, (old, old))
    ended = watch_pass(home=tmp_path / "home", env={})
    row.refresh_from_db()
    assert ended.closed == 1 and row.state == "done" and row.trace_id != followed.pk
    assert not models.Trace.objects.filter(pk=followed.pk).exists()
    files = sorted(project.rglob("*.jsonl"), key=lambda p: "subagents" in str(p))
    whole = trace_upload(
        files=[(f.relative_to(project).as_posix(), f.read_bytes()) for f in files], name="w"
    ).trace
    assert row.trace.calls_count == whole.calls_count > followed.calls_count


def test_an_append_that_crosses_the_checked_head_keeps_the_live_trace(tmp_path, corpus):
    """The head digest is taken again when an append carries the offset past
    HEAD_CHECK_BYTES: the next full pass sees an append, not a rewrite."""
    from traces.live.watch import HEAD_CHECK_BYTES

    lines = (corpus / "claude_code_jsonl/spotter/tool_heavy.jsonl").read_bytes().splitlines(True)
    home = tmp_path / "home"
    session = home / ".claude/projects/-work-spotter/growing.jsonl"
    session.parent.mkdir(parents=True)
    session.write_bytes(lines[0])
    assert watch_pass(home=home, env={}).imported == 1
    first = models.WatchedSession.objects.get().trace_id
    with open(session, "ab") as handle:
        handle.write(b"".join(lines[1:20]))  # well past the checked head at once
    assert session.stat().st_size > HEAD_CHECK_BYTES
    assert watch_pass(home=home, env={}).appended_lines == 19
    with open(session, "ab") as handle:
        handle.write(lines[20])
    later = watch_pass(home=home, env={})
    assert (later.replaced, later.appended_lines) == (0, 1)
    assert models.WatchedSession.objects.get().trace_id == first
