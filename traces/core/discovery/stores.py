"""The agents' session stores on a machine: where each agent we read keeps its sessions.

One row per store, from each reader's documented location (its adapter's `where`, the
README's "Your agents" table and ../shared/agents/AGENTS.md): the folder below the home,
the environment variable that moves it (the agent's own where it has one, else ours,
named `<AGENT>_<FOLDER>_DIR`), the glob of its session files or folders below that
folder, and whether a session is a JSONL file appended in place (followed live) or a
document rewritten whole (read again and replaced).

Aider keeps its history in each repository it works on (`.aider.chat.history.md` at the
repository's root), not in a folder of its own: its store is the home (and each root)
itself, searched two folders deep (`~/proj/`, `~/code/proj/`) and listed only where a
history was found.
"""

from __future__ import annotations

from typing import Literal

from traces.core.records import dataclass

SessionKind = Literal["file", "folder", "opencode"]
"""How one session is kept: one file; a folder whose files are read together; an
OpenCode session file whose messages and parts sit in sibling trees."""

AIDER_HISTORY = ".aider.chat.history.md"
"""The chat history aider writes at the root of the repository it works on."""

INDEX_FILES = frozenset({"sessions.json", "logs.json", "session.json", "index.json"})
"""Index and metadata files beside the sessions: never a session of their own."""

VSCODE_USER = (
    ".config/Code/User",
    "Library/Application Support/Code/User",
    "AppData/Roaming/Code/User",
)
"""VS Code's user data folder on Linux, macOS and Windows, below the home."""

CLINE_EXTENSIONS = (
    ("Cline", "saoudrizwan.claude-dev"),
    ("Roo Code", "rooveterinaryinc.roo-cline"),
    ("Kilo Code", "kilocode.kilo-code"),
)


@dataclass(frozen=True, slots=True)
class Store:
    """Where one agent keeps its sessions, and how to tell one session from the next."""

    key: str
    """Stable id of the store (the page's buttons and the database name it by this)."""
    agent: str
    format: str
    """The reader's `name` (traces.core.reading.formats)."""
    locations: tuple[str, ...]
    """Folders below the home, the first that exists wins."""
    env: str
    """The environment variable naming the folder instead (ignored when empty)."""
    pattern: str
    """Glob of a session below the folder."""
    kind: SessionKind = "file"
    appends: bool = False
    """A session is JSONL the agent appends to: new complete lines are followed live."""
    also: tuple[str, ...] = ()
    """More globs of a session below the folder, beside `pattern`."""
    subagents: bool = False
    """Claude Code: a session's subagents write files of their own (`<session>/subagents/
    agent-<id>.jsonl`, or `agent-<id>.jsonl` beside it in older versions), read with it
    as one trace, never as sessions of their own."""
    in_projects: bool = False
    """The folder is the home (or a root) itself, where the agent writes into projects:
    listed only where it holds a session."""

    @property
    def patterns(self) -> tuple[str, ...]:
        return (self.pattern, *self.also)


def _vscode(sub: str) -> tuple[str, ...]:
    return tuple(f"{user}/{sub}" for user in VSCODE_USER)


STORES: tuple[Store, ...] = (
    Store(
        "claude-code", "Claude Code", "claude-code", (".claude/projects",),
        "CLAUDE_PROJECTS_DIR", "*/*.jsonl", appends=True, subagents=True,
    ),
    Store(
        "codex", "Codex CLI", "codex-rollout", (".codex/sessions",),
        "CODEX_SESSIONS_DIR", "**/rollout-*.jsonl", appends=True,
    ),
    Store(
        "gemini-cli", "Gemini CLI", "gemini-cli", (".gemini/tmp",),
        "GEMINI_TMP_DIR", "*/chats/session-*.json*", appends=True,
    ),
    Store(
        "qwen-code", "Qwen Code", "qwen-code", (".qwen/projects", ".qwen/tmp"),
        "QWEN_PROJECTS_DIR", "*/chats/*.jsonl", appends=True,
    ),
    Store(
        "iflow-cli", "iFlow CLI", "iflow-cli", (".iflow/projects",),
        "IFLOW_PROJECTS_DIR", "*/session-*.jsonl", appends=True,
    ),
    Store(
        "pi", "pi", "pi-session", (".pi/agent/sessions",),
        "PI_SESSIONS_DIR", "*/*.jsonl", appends=True,
    ),
    Store(
        "goose", "Goose", "goose", (".local/share/goose/sessions",),
        "GOOSE_SESSIONS_DIR", "*.jsonl", appends=True,
    ),
    Store(
        "copilot-cli", "GitHub Copilot CLI", "copilot-cli", (".copilot/session-state",),
        "COPILOT_SESSION_STATE_DIR", "*/events.jsonl", appends=True,
    ),
    Store(
        "kimi-code", "Kimi Code", "kimi-wire", (".kimi-code/sessions", ".kimi/sessions"),
        "KIMI_SESSIONS_DIR", "*/session_*/agents/main/*.jsonl", appends=True,
    ),
    Store(
        "continue", "Continue", "continue", (".continue/sessions",),
        "CONTINUE_SESSIONS_DIR", "*.json",
    ),
    Store(
        "cline-sdk", "Cline CLI", "cline-sdk", (".cline/data/sessions",),
        "CLINE_SESSIONS_DIR", "*", kind="folder",
    ),
    *(
        Store(
            f"vscode-{extension.split('.')[-1]}", agent, "cline-task",
            _vscode(f"globalStorage/{extension}/tasks"),
            f"{agent.upper().replace(' ', '_')}_TASKS_DIR", "*", kind="folder",
        )
        for agent, extension in CLINE_EXTENSIONS
    ),
    Store(
        "vscode-chat", "VS Code Copilot Chat", "vscode-sessions", _vscode("workspaceStorage"),
        "VSCODE_WORKSPACE_STORAGE_DIR", "*/chatSessions/*.json",
    ),
    Store(
        "vscode-chat-empty", "VS Code Copilot Chat", "vscode-sessions",
        _vscode("globalStorage/emptyWindowChatSessions"),
        "VSCODE_EMPTY_WINDOW_CHATS_DIR", "*.json",
    ),
    Store(
        "openhands", "OpenHands CLI", "openhands-sdk", (".openhands/conversations",),
        "OPENHANDS_CONVERSATIONS_DIR", "*", kind="folder",
    ),
    Store(
        "openhands-v0", "OpenHands", "openhands", (".openhands/sessions",),
        "OPENHANDS_SESSIONS_DIR", "*/events", kind="folder",
    ),
    Store(
        "opencode", "OpenCode", "opencode", (".local/share/opencode/storage",),
        "OPENCODE_STORAGE_DIR", "session/*/ses_*.json", kind="opencode",
    ),
    Store(
        "aider", "aider", "aider-chat", ("",), "AIDER_PROJECTS_DIR",
        AIDER_HISTORY, also=(f"*/{AIDER_HISTORY}", f"*/*/{AIDER_HISTORY}"), in_projects=True,
    ),
)  # fmt: skip


def store_named(key: str) -> Store | None:
    return next((s for s in STORES if s.key == key), None)
