"""A fake home laid out as the agents lay out theirs, from the shared corpus files.

Files are copied at test (or bench) time into a temporary folder, never into the
repository. `build_home` returns the home and what it put where, so a test knows which
session is which; `copies` repeats the sessions (under new names) for the benchmark.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

OLD = 1_700_000_000.0
"""A modification time long past: such a session is finished, not followed live."""


@dataclass
class FakeHome:
    home: Path
    sessions: dict[str, Path] = field(default_factory=dict)
    """A short name -> the session's path in the fake home."""


def _copy(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copyfile(source, target)
    return target


def build_home(home: Path, corpus: Path, agents: Path, *, copies: int = 1) -> FakeHome:
    """Every store the corpus has real files for, each session `copies` times."""
    fake = FakeHome(home)
    claude = corpus / "claude_code_jsonl" / "spotter"
    codex = sorted((corpus / "codex_rollout_jsonl").glob("rollout-*.jsonl"))
    gemini = sorted((agents / "gemini_cli_chats/ticketing-vc/chats").glob("*.jsonl"))
    continue_doc = next((agents / "continue_sessions/continue-debug").glob("8*.json"))
    cline = agents / "cline_sdk_sessions/1784094124598_rruoq"
    openhands = next((agents / "openhands_sdk_conversations").iterdir())
    copilot = sorted((agents / "copilot_cli_events").iterdir())
    iflow = next((agents / "iflow_cli").glob("*.jsonl"))
    pi = agents / "pi_sessions/pi-mono_session-2025-12-17.jsonl"
    aider = agents / "aider_history/aider_tests-fixtures_chat-history.md"
    for n in range(copies):
        tag = f"-{n}" if copies > 1 else ""
        put = fake.sessions
        put[f"claude-tool-heavy{tag}"] = _copy(
            claude / "tool_heavy.jsonl",
            home / f".claude/projects/-work-spotter{tag}/tool_heavy.jsonl",
        )
        put[f"claude-short{tag}"] = _copy(
            claude / "short.jsonl", home / f".claude/projects/-work-spotter{tag}/short.jsonl"
        )
        for i, rollout in enumerate(codex):
            put[f"codex-{i}{tag}"] = _copy(
                rollout, home / f".codex/sessions/2026/05/1{n % 10}/{rollout.stem}{tag}.jsonl"
            )
        for i, chat in enumerate(gemini):
            put[f"gemini-{i}{tag}"] = _copy(
                chat, home / f".gemini/tmp/ticketing{tag}/chats/{chat.name}"
            )
        put[f"continue{tag}"] = _copy(
            continue_doc, home / f".continue/sessions/{continue_doc.stem}{tag}.json"
        )
        put[f"cline{tag}"] = _copy(cline, home / f".cline/data/sessions/{cline.name}{tag}")
        put[f"openhands{tag}"] = _copy(
            openhands, home / f".openhands/conversations/{openhands.name}{tag}"
        )
        for i, folder in enumerate(copilot):
            put[f"copilot-{i}{tag}"] = _copy(
                folder / "events.jsonl",
                home / f".copilot/session-state/{folder.name}{tag}/events.jsonl",
            )
        put[f"iflow{tag}"] = _copy(
            iflow, home / f".iflow/projects/-work{tag}/{iflow.name.split('_', 1)[1]}"
        )
        put[f"pi{tag}"] = _copy(pi, home / f".pi/agent/sessions/--work--{tag}/{pi.name}")
        # aider writes its history into the repository it works on, two folders down.
        put[f"aider{tag}"] = _copy(aider, home / f"code/aider-fixtures{tag}/.aider.chat.history.md")
    # Index files beside the sessions, which are not sessions.
    _copy(
        agents / "continue_sessions/continue-debug/sessions.json",
        home / ".continue/sessions/sessions.json",
    )
    _copy(
        agents / "gemini_cli_chats/ticketing-vc/logs.json", home / ".gemini/tmp/ticketing/logs.json"
    )
    age_all(home)
    return fake


def age_all(home: Path, mtime: float = OLD) -> None:
    """Make every file look long finished."""
    import os

    for path in home.rglob("*"):
        if path.is_file():
            os.utime(path, (mtime, mtime))
