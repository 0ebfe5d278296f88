"""One Claude API response written a content block a line, as the Claude Code CLI writes it.

Claude Code session transcripts and the Claude Agent SDK's stream-json messages both come
from the Claude Code CLI, which writes one API response as several `assistant` lines,
one per content block, with the same `message.id`. Partial lines carry partial usage, so
the call takes the usage of the line with the most output tokens (the latest on ties),
never a sum; `stop_reason` is null on every line of recent versions, so when no line has
one it is inferred and `extra.stop_reason_inferred` says so. Both adapters assemble their
calls with `ClaudeResponse`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, Self

from traces.core.records import dataclass

from ...model import Exchange, Message
from ..dialects import anthropic
from ..dialects import claude_code as cc

HEAD_SKIPS = ("content", "usage", "stop_reason")
"""Fields of a line's message that are the response's own, not copied from its first line."""
SHARED_HEAD = ("model", "type", "role")
SHARED_FIELDS = frozenset({*SHARED_HEAD, "stop_reason"})
"""Fields whose few values every response repeats (`claude-sonnet-4-5`, `message`): the
response a call keeps holds one shared copy of each (`shared_value`), not one per line."""
SHARED_CHARS = 100


def shared_value(key: str, value: Any) -> Any:
    """The value, or its one shared (interned) copy for a short text of `SHARED_FIELDS`."""
    if key in SHARED_FIELDS and type(value) is str and len(value) <= SHARED_CHARS:
        return sys.intern(value)
    return value


@dataclass(slots=True, eq=False)
class ClaudeResponse:
    """One API response being assembled from its lines."""

    message_id: str
    line: int
    request: Sequence[Any]
    transcript_message: dict[str, Any]
    """The response as the transcript holds it: the assistant message, its blocks so far."""
    head: dict[str, Any]
    extra: dict[str, Any]
    usage: Any = None
    best_output: int = -2
    stop_reason: str | None = None
    model: str | None = None

    @classmethod
    def first_line(
        cls,
        line: int,
        message_id: str,
        request: Sequence[Any],
        message: dict[str, Any],
        extra: dict[str, Any],
    ) -> Self:
        """A response opened by its first line (whose blocks `add` then reads)."""
        head = {k: v for k, v in message.items() if k not in HEAD_SKIPS}
        for key in SHARED_HEAD:
            if key in head:
                head[key] = shared_value(key, head[key])
        return cls(
            message_id=message_id,
            line=line,
            request=request,
            transcript_message={"role": "assistant", "content": []},
            head=head,
            extra=extra,
        )

    @property
    def blocks(self) -> list[Any]:
        blocks: list[Any] = self.transcript_message["content"]
        return blocks

    def add(self, message: dict[str, Any], blocks: list[Any]) -> None:
        """Add one line's new blocks, its usage snapshot and its stop reason."""
        self.blocks.extend(blocks)
        usage = message.get("usage")
        tokens = cc.output_tokens(usage)
        if isinstance(usage, dict) and tokens >= self.best_output:
            self.usage, self.best_output = usage, tokens
        if isinstance(message.get("stop_reason"), str):
            self.stop_reason = shared_value("stop_reason", message["stop_reason"])

    def exchange(
        self,
        normalize: Callable[[Any], Message],
        notes: dict[str, Any],
        **context: Any,
    ) -> Exchange:
        """The call this response is; `notes` are the adapter's additions to `extra`, and
        `context` the Exchange's loop fields (and times, when the format has them)."""
        extra = dict(self.extra)
        stop_reason = self.stop_reason
        if stop_reason is None:
            stop_reason = cc.infer_stop_reason(self.blocks)
            extra["stop_reason_inferred"] = True
        extra.update(notes)
        raw = {
            **self.head,
            "content": self.blocks,
            "stop_reason": self.stop_reason,
            "usage": self.usage,
        }
        return Exchange(
            line=self.line,
            messages=self.request,
            normalize=normalize,
            model=self.model,
            response=anthropic.normalize_message(self.transcript_message),
            response_raw=raw,
            stop_reason=stop_reason,
            usage=anthropic.usage_from(self.usage),
            extra=extra,
            **context,
        )
