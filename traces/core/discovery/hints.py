"""Agent, session id and project of a found session, for readers that do not record them.

Most readers put `extra.agent_session` on a trace's first call; the Claude Code and Codex
readers do not, though their files say it on the first lines (Claude Code's `sessionId`
and `cwd` on every record, Codex's `session_meta` payload). The watcher fills what the
reader left blank from these hints and from the store, so every watched trace has its
agent, project and session id.
"""

from __future__ import annotations

from typing import Any

import orjson

from .find import Candidate

HEAD_BYTES = 256 * 1024
"""The first bytes looked at: the session id and working directory come in the first lines."""


def session_hints(candidate: Candidate, head: bytes) -> dict[str, str]:
    """{"agent", "session_id", "project"} from the store, the path and the file's head."""
    hints = {"agent": candidate.store.agent, "session_id": _path_session(candidate)}
    if candidate.store.in_projects:  # aider: the history sits at the project's root
        hints["project"] = str(candidate.path.parent)
    if candidate.kind == "file" and candidate.path.suffix == ".jsonl":
        recorded = ""
        for line in head.split(b"\n")[:200]:
            found = _from_record(_loads(line))
            recorded = recorded or found.get("session_id", "")
            if found.get("project"):
                hints.setdefault("project", found["project"])
            if recorded and "project" in hints:
                break
        if recorded:
            hints["session_id"] = recorded
    return hints


def _path_session(candidate: Candidate) -> str:
    path = candidate.path
    if candidate.kind == "folder":
        return path.parent.name if path.name == "events" else path.name
    if path.name == "events.jsonl":  # Copilot CLI: <session id>/events.jsonl
        return path.parent.name
    if candidate.store.in_projects:  # aider: one history per project, named by it
        return path.parent.name
    return path.stem


def _loads(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return None


def _from_record(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    found: dict[str, str] = {}
    payload = value.get("payload")
    if value.get("type") == "session_meta" and isinstance(payload, dict):
        value = payload  # Codex: {"type": "session_meta", "payload": {"id", "cwd", ...}}
        if isinstance(payload.get("id"), str):
            found["session_id"] = payload["id"]
    session = value.get("sessionId") or value.get("session_id")
    if isinstance(session, str) and session:
        found["session_id"] = session
    cwd = value.get("cwd")
    if isinstance(cwd, str) and cwd:
        found["project"] = cwd
    return found
