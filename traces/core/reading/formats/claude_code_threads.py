"""The conversations of a Claude Code upload: threads, rewind anchors and subagent links.

A session file holds the main conversation and its sidechains; a subagent file (or a
subagent's lines) holds another conversation, attached to the Task/Agent tool call that
spawned it. Every line's uuid is an anchor (where its conversation stood just after it),
so a line whose parent is an earlier point rewinds the transcript there, and a compaction
agent can start from the conversation it summarises. What one file teaches the next
(anchors, subagent links) is `Shared` between the adapters of one upload.
"""

from __future__ import annotations

from typing import Any

from traces.core.records import dataclass, field

from ..dialects import claude_code as cc
from .claude_response import ClaudeResponse

COMPACTION_AGENT_PREFIX = "acompact"


@dataclass(frozen=True, slots=True, eq=False)
class Anchor:
    """Where one conversation stood just after a line, enough to rebuild that prefix.

    `messages` and `pending` are only ever appended to (a rewind or a compaction starts new
    lists), so the slices taken here stay valid.
    """

    thread: Thread
    messages: list[Any]
    count: int
    pending: list[Any]
    pending_count: int

    def prefix(self) -> list[Any]:
        head = self.messages[: self.count]
        if self.pending_count:
            head.append(cc.merge_user_messages(self.pending[: self.pending_count]))
        return head


@dataclass(slots=True, eq=False)
class Response(ClaudeResponse):
    """One API response being assembled, with what the user did about it."""

    started_at: float | None = None
    ended_at: float | None = None
    followed: bool = False
    interrupted: str | None = None
    rejected: list[str] = field(default_factory=list)
    interrupted_tools: list[str] = field(default_factory=list)
    tool_results: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, eq=False)
class Thread:
    """One conversation (the session, or one subagent) and its transcript so far."""

    key: str
    session_id: str
    agent_id: str | None
    sidechain: bool
    messages: list[Any] = field(default_factory=list)
    pending: list[Any] = field(default_factory=list)
    last_time: float | None = None
    model: str | None = None
    response: Response | None = None
    borrowed: list[Any] | None = None
    borrowed_from: Anchor | None = None
    notes: dict[str, Any] = field(default_factory=dict)
    first_prompt: str | None = None

    @property
    def compaction_agent(self) -> bool:
        return bool(self.agent_id and self.agent_id.startswith(COMPACTION_AGENT_PREFIX))


@dataclass(slots=True, eq=False)
class Shared:
    """What the files of one upload teach each other (a session and its subagent files)."""

    anchors: dict[str, Anchor] = field(default_factory=dict)
    agent_tools: dict[tuple[str, str], str] = field(default_factory=dict)
    prompt_tools: dict[tuple[str, str], str] = field(default_factory=dict)
    subagent_inputs: dict[str, dict[str, Any]] = field(default_factory=dict)

    # -- anchors ------------------------------------------------------------------------
    def anchor(self, value: dict[str, Any], thread: Thread) -> None:
        """Remember where the line's conversation stands just after it."""
        uuid = value.get("uuid")
        if isinstance(uuid, str):
            self.anchors[uuid] = Anchor(
                thread, thread.messages, len(thread.messages), thread.pending, len(thread.pending)
            )

    def parent_anchor(self, value: dict[str, Any]) -> Anchor | None:
        parent_uuid = value.get("parentUuid")
        return self.anchors.get(parent_uuid) if isinstance(parent_uuid, str) else None

    def pass_through(self, value: dict[str, Any]) -> None:
        """A line that is not a message stands where its parent stood."""
        uuid = value.get("uuid")
        parent = self.parent_anchor(value)
        if isinstance(uuid, str) and parent is not None:
            self.anchors[uuid] = parent

    # -- subagent links -----------------------------------------------------------------
    def learn_from_calls(self, thread: Thread, message: dict[str, Any]) -> None:
        """Remember Task/Agent calls by prompt, to find the subagent they start."""
        for block in cc.content_blocks(message.get("content")):
            if not (isinstance(block, dict) and block.get("type") == "tool_use"):
                continue
            tool_input = block.get("input")
            tool_id = block.get("id")
            if block.get("name") not in cc.SUBAGENT_TOOLS or not isinstance(tool_id, str):
                continue
            if isinstance(tool_input, dict):
                self.subagent_inputs[tool_id] = tool_input
                prompt = tool_input.get("prompt")
                if isinstance(prompt, str):
                    self.prompt_tools[(thread.session_id, prompt)] = tool_id

    def learn_from_results(
        self, thread: Thread, value: dict[str, Any], results: list[dict[str, Any]]
    ) -> None:
        """A Task result names the agent it ran (`toolUseResult.agentId`)."""
        outcome = value.get("toolUseResult")
        if len(results) != 1 or not isinstance(outcome, dict):
            return
        agent = text_or_none(outcome.get("agentId"))
        tool_id = results[0].get("tool_use_id")
        if agent and isinstance(tool_id, str):
            self.agent_tools[(thread.session_id, agent)] = tool_id

    def learn_from_progress(self, value: dict[str, Any], default_session: str) -> None:
        """`agent_progress` lines name the running agent and the Task call that runs it."""
        data = value.get("data")
        if not isinstance(data, dict) or data.get("type") != "agent_progress":
            return
        agent = text_or_none(data.get("agentId"))
        tool_id = value.get("parentToolUseID")
        session = text_or_none(value.get("sessionId")) or default_session
        if agent and isinstance(tool_id, str):
            self.agent_tools.setdefault((session, agent), tool_id)

    def parent_tool(self, thread: Thread) -> str | None:
        """The Task/Agent tool call a subagent's conversation runs under, when known."""
        if thread.agent_id:
            linked = self.agent_tools.get((thread.session_id, thread.agent_id))
            if linked:
                return linked
        if (thread.agent_id or thread.sidechain) and thread.first_prompt:
            return self.prompt_tools.get((thread.session_id, thread.first_prompt))
        return None

    def label(self, thread: Thread) -> str:
        """The conversation's name on the page: session, subagent or compaction agent."""
        if thread.agent_id and thread.compaction_agent:
            return f"compaction agent {thread.agent_id}"
        if thread.agent_id or thread.sidechain:
            name = thread.agent_id or thread.key.rsplit(":", 1)[-1]
            parent = self.parent_tool(thread)
            spec = self.subagent_inputs.get(parent or "", {})
            kind = spec.get("subagent_type")
            return f"subagent {name}" + (f" ({kind})" if isinstance(kind, str) else "")
        return f"session {thread.session_id[:8]}"


def text_or_none(value: Any) -> str | None:
    """A non-empty string, or None."""
    return value if isinstance(value, str) and value else None
