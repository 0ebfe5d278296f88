"""Rule unknown-tool."""

from __future__ import annotations

from collections.abc import Iterator

from ._common import quote, tool_uses
from .base import Finding, LintContext, Rule
from .registry import register

PROVIDER_RUN_CALLS = {"server_tool_use", "mcp_tool_use", "mcp_call"}
"""Raw block types of tools the provider runs (web search, MCP connectors): their names
come from server-side tool sets, not the request's `tools` list."""
NAMED_CALLS = {"function_call", "custom_tool_call", "tool_call"}
"""Responses-style `*_call` items addressed by a declared name; the other `*_call` kinds
(`computer_call`, `local_shell_call`) answer built-in tools that have no name."""
NAMES_SHOWN = 6


@register
class UnknownTool(Rule):
    """A call to a tool the request did not offer.

    What it finds
    A `tool_use` whose name is not among the tools that request declared. Requests
    recorded without a tool list (response-only recordings, session logs such as Claude
    Code transcripts that do not store the request) are skipped: the rule cannot know
    what was offered. Server-run tools (web search, MCP connectors) are skipped too.

    Why it matters
    A hallucinated or stale tool name cannot be dispatched: the loop crashes, skips the
    call (leaving it dangling) or runs something else, and the model keeps asking.

    Example
    The tools are `Read`, `Edit` and `Bash`; the model asks `read_file(path=...)`, the
    name from an older prompt.

    How to fix
    Answer with an error result that lists the valid names ("error: no tool read_file;
    tools are Read, Edit, Bash"), and keep tool names stable across prompt versions.
    """

    id = "unknown-tool"
    severity = "error"
    message = (
        "call {call} asks for tool {name} ({tool_call_id}), which the request did not"
        " offer{offered}; answer with an error result naming the valid tools"
    )

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for call in ctx.trace.calls:
            if not call.tools:
                continue
            names = ctx.tool_names(call)
            for block in tool_uses(call):
                if _built_in(block.raw) or (block.name or "") in names:
                    continue
                yield self.finding(
                    call, block.tool_id, name=quote(block.name or ""), offered=_offered(names)
                )


def _built_in(raw: object) -> bool:
    kind = raw.get("type") if isinstance(raw, dict) else None
    if not isinstance(kind, str):
        return False
    return kind in PROVIDER_RUN_CALLS or (kind.endswith("_call") and kind not in NAMED_CALLS)


def _offered(names: set[str]) -> str:
    if not names:
        return " (it offered only unnamed built-in tools)"
    shown = sorted(names)
    listed = ", ".join(shown[:NAMES_SHOWN])
    if len(shown) > NAMES_SHOWN:
        listed += f" and {len(shown) - NAMES_SHOWN} more"
    return f" (offered: {listed})"
