"""Rule missing-tool-use-echo."""

from __future__ import annotations

from collections.abc import Iterator

from traces.core.records import dataclass, field

from .base import Finding, LintContext, Rule
from .registry import register

SERVER_STATE_KEYS = ("previous_response_id", "conversation", "previous_message_id")
"""`Call.extra` keys of requests whose history the provider keeps (the Responses API,
Anthropic's message threads)."""


@register
class MissingToolUseEcho(Rule):
    """Tool results sent without the assistant's tool call echoed back.

    What it finds
    A request that appends `tool_result` blocks for calls an earlier response asked for,
    while the assistant message holding those `tool_use` blocks is not in its
    transcript. Requests that continue a conversation kept by the provider
    (`previous_response_id`, `conversation`, a message thread's `previous_message_id`)
    are skipped: their history is on the server.

    Why it matters
    The API pairs every result with a `tool_use` of the previous assistant message; a
    result without one is rejected as unmatched, or the model reads an answer to a
    question it cannot see.

    Example
    The loop appends `{"role": "user", "content": [{"type": "tool_result",
    "tool_use_id": "toolu_01A", ...}]}` but dropped the assistant turn that asked
    `Read(orders.py)`.

    How to fix
    Append the assistant's whole response (text and `tool_use` blocks, verbatim) to the
    transcript before the results, every turn.
    """

    id = "missing-tool-use-echo"
    severity = "error"
    message = (
        "call {call} sends the result of {tool_call_id} ({name}, asked in call {asked}){more}"
        " without the assistant tool_use in its transcript; echo the assistant message"
        " before the results"
    )

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        asked_in = {run.id: run for run in reversed(ctx.trace.tool_runs) if run.call is not None}
        walks: dict[int, _Walk] = {}
        for call in ctx.trace.calls:
            walk = walks.get(call.loop)
            if walk is None:
                walk = walks[call.loop] = _Walk()
            walk.truncate(call.prefix_len)
            missing: list[str] = []
            for message in call.appended:
                # One pass over the blocks: the message's tool_use ids and its results.
                own: list[str | None] = []
                results = []
                for block in message.blocks:
                    if block.kind == "tool_use":
                        own.append(block.tool_id)
                    elif block.kind == "tool_result":
                        results.append(block)
                for block in results:
                    if block.tool_id in own:
                        continue  # ReAct text writes the call and its output in one message
                    run = asked_in.get(block.tool_id or "")
                    asked = run is not None and run.call is not None and run.call < call.index
                    if asked and not walk.uses.get(block.tool_id or ""):
                        missing.append(block.tool_id or "")
                walk.append(tuple([tool_id or "" for tool_id in own]))
            if missing and not any(key in call.extra for key in SERVER_STATE_KEYS):
                first = asked_in[missing[0]]
                more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
                yield self.finding(
                    call, missing[0], name=first.name or "?", asked=first.call, more=more
                )


@dataclass(slots=True)
class _Walk:
    """A loop's running transcript as the tool_use ids each message holds, and how many
    messages of it hold each id (a plain dict: a Counter's update costs five times more)."""

    messages: list[tuple[str, ...]] = field(default_factory=list)
    uses: dict[str, int] = field(default_factory=dict)

    def truncate(self, size: int) -> None:
        if size >= len(self.messages):
            return
        uses = self.uses
        for ids in self.messages[size:]:
            for tool_id in ids:
                uses[tool_id] -= 1
        del self.messages[size:]

    def append(self, ids: tuple[str, ...]) -> None:
        self.messages.append(ids)
        uses = self.uses
        for tool_id in ids:
            uses[tool_id] = uses.get(tool_id, 0) + 1
