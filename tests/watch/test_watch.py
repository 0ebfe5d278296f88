"""`watch` end to end on a fake home built from the corpus: first pass, restart, rewrite,
a store that disappears and a malformed file (the growing session is in test_watch_live)."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from django.core.management import call_command

from tests.watch.fakehome import age_all, build_home
from traces import live, models
from traces.live.watch import watch_pass
from traces.services.upload import trace_upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake(tmp_path, corpus, agents):
    return build_home(tmp_path / "home", corpus, agents)


def traces_by_path() -> dict[str, models.Trace]:
    return {row.path: row.trace for row in models.WatchedSession.objects.select_related("trace")}


def test_the_first_pass_imports_every_session_and_a_restart_imports_nothing_twice(fake):
    first = watch_pass(home=fake.home, env={})
    assert first.problems == []
    assert first.imported == first.found == len(fake.sessions)
    by_path = traces_by_path()
    assert set(by_path) == {str(p) for p in fake.sessions.values()}  # no index file
    assert models.Trace.objects.count() == len(fake.sessions)
    for trace in by_path.values():
        assert trace.state == models.Trace.State.COMPLETE  # all long finished
        assert trace.agent and trace.session_id, trace.name
        assert trace.calls_count > 0, trace.name
    claude = by_path[str(fake.sessions["claude-tool-heavy"])]
    assert (claude.agent, claude.working_dir) == ("Claude Code", "/home/marco/projects/spotter")
    codex = by_path[str(fake.sessions["codex-0"])]
    assert codex.agent == "Codex CLI" and codex.working_dir.startswith("/Users/Sample_User/")

    live.forget_sessions()  # a new process: only the database remembers
    again = watch_pass(home=fake.home, env={})
    assert (again.imported, again.replaced, again.appended_lines) == (0, 0, 0)
    assert again.unchanged == len(fake.sessions)
    assert traces_by_path() == by_path
    assert models.Trace.objects.count() == len(fake.sessions)


def test_a_rewritten_json_session_replaces_its_trace(fake):
    watch_pass(home=fake.home, env={})
    path = fake.sessions["continue"]
    before = traces_by_path()[str(path)]
    document = orjson.loads(path.read_bytes())
    document["history"] = document["history"][:4]  # the agent rewrote it, shorter
    path.write_bytes(orjson.dumps(document))
    result = watch_pass(home=fake.home, env={})
    assert (result.replaced, result.imported, result.problems) == (1, 0, [])
    after = traces_by_path()[str(path)]
    assert after.pk != before.pk
    assert not models.Trace.objects.filter(pk=before.pk).exists()  # one trace per session
    assert 0 < after.calls_count < before.calls_count
    assert models.Trace.objects.count() == len(fake.sessions)


def test_a_touched_document_is_not_read_again(fake):
    watch_pass(home=fake.home, env={})
    path = fake.sessions["continue"]
    path.touch()
    result = watch_pass(home=fake.home, env={})
    assert (result.replaced, result.unchanged) == (0, len(fake.sessions))


def test_a_store_that_disappears_and_a_malformed_file_are_reported_and_the_rest_imported(
    fake, corpus
):
    watch_pass(home=fake.home, env={})
    gemini = [p for name, p in fake.sessions.items() if name.startswith("gemini")]
    kept = {str(p): traces_by_path()[str(p)].pk for p in gemini}
    shutil.rmtree(fake.home / ".gemini")
    broken = fake.home / ".continue/sessions/broken.json"
    broken.write_bytes(b'{"sessionId": "x", "history": [')
    new = fake.home / ".claude/projects/-work-other/subagent.jsonl"
    new.parent.mkdir()
    shutil.copyfile(corpus / "claude_code_jsonl/spotter/subagent.jsonl", new)
    result = watch_pass(home=fake.home, env={})
    assert result.imported == 1
    assert traces_by_path()[str(new)].calls_count > 0
    store_gone = f"Gemini CLI ({fake.home / '.gemini/tmp'}): the store is gone"
    assert store_gone in result.problems
    (malformed,) = [p for p in result.problems if p.startswith(str(broken))]
    assert len(malformed) > len(str(broken)) + 10  # the reader's reason follows the path
    row = models.WatchedSession.objects.get(path=str(broken))
    assert row.state == "error" and row.error and row.trace is None
    for path, trace_id in kept.items():  # the traces of the vanished store are kept
        row = models.WatchedSession.objects.get(path=path)
        assert row.state == "missing" and row.trace_id == trace_id
        assert "is gone" in row.error
    assert models.Trace.objects.count() == len(fake.sessions) + 1
    # The malformed file is not read again until it changes, and is still reported.
    again = watch_pass(home=fake.home, env={})
    assert again.imported == 0 and any(p.startswith(str(broken)) for p in again.problems)


def test_an_environment_variable_moves_a_store_and_a_bad_one_is_reported(fake, tmp_path):
    moved = tmp_path / "elsewhere"
    shutil.move(fake.home / ".claude/projects", moved)
    result = watch_pass(home=fake.home, env={"CLAUDE_PROJECTS_DIR": str(moved)})
    claude = [s for s in result.stores if s.store.key == "claude-code"]
    assert [(s.location, len(s.sessions)) for s in claude] == [(moved, 2)]
    assert result.imported == len(fake.sessions) and result.problems == []
    bad = watch_pass(home=fake.home, env={"CODEX_SESSIONS_DIR": str(tmp_path / "nowhere")})
    assert any("$CODEX_SESSIONS_DIR names" in p for p in bad.problems)


def test_the_command_runs_one_pass_and_prints_it(fake, capsys):
    call_command("watch", "--once", "--home", str(fake.home))
    out = capsys.readouterr().out
    assert f"{len(fake.sessions)} sessions in 10 stores: {len(fake.sessions)} imported" in out
    call_command("watch", "--once", "--home", str(fake.home))
    assert "0 imported" in capsys.readouterr().out


def test_a_claude_code_sessions_subagents_are_read_with_it(tmp_path, corpus):
    """Subagents write files of their own (`<session>/subagents/`, or older `agent-<id>.jsonl`
    beside the session): each session is one trace with its subagents' calls, as an upload
    of all its files together makes, and no subagent file is a session of its own."""
    spotter = corpus / "claude_code_jsonl/spotter"
    flat = corpus / "claude_code_jsonl/codemie_tmp-private"
    home = tmp_path / "home"
    project = home / ".claude/projects/-work-spotter"
    shutil.copytree(
        spotter / "8463c716-a2ea-4c14-9efa-87158ebd9f20",
        project / "8463c716-a2ea-4c14-9efa-87158ebd9f20",
    )
    shutil.copyfile(
        spotter / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
        project / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
    )
    shutil.copytree(flat, home / ".claude/projects/-tmp-private")
    age_all(home)

    report = watch_pass(home=home, env={})
    assert (report.found, report.imported, report.problems) == (2, 2, [])
    by_path = traces_by_path()
    assert sorted(Path(p).name for p in by_path) == [
        "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl",
        "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
    ]
    for main, files in (
        (
            project / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
            [
                project / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
                *sorted(
                    (project / "8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents").glob("*.jsonl")
                ),
            ],
        ),
        (
            home / ".claude/projects/-tmp-private/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl",
            sorted((home / ".claude/projects/-tmp-private").glob("*.jsonl")),
        ),
    ):
        alone = trace_upload(files=[(main.name, main.read_bytes())], name="alone").trace
        together = trace_upload(
            files=[(f.relative_to(main.parent).as_posix(), f.read_bytes()) for f in files],
            name="together",
        ).trace
        watched = by_path[str(main)]
        assert len(files) > 1 and together.calls_count > alone.calls_count
        assert (watched.calls_count, watched.input_tokens) == (
            together.calls_count,
            together.input_tokens,
        )
