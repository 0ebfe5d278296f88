"""What a live view shows of responses an adapter still holds (the last message of each
loop, until a later line or the end of the file completes it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..model import Exchange

PREVIEW_CHARS = 500


def held_previews(held: Sequence[tuple[Exchange, bool]]) -> list[dict[str, Any]]:
    """One small JSON object per held response, in line order.

    `complete` is true once a later line of its loop has shown that nothing more will be
    added (it is still held only until its call can be finished, e.g. by a later tool
    result); a viewer also takes it as settled once the file has been quiet a moment.
    """
    previews = []
    for exchange, complete in held:
        response = exchange.response
        blocks = response.blocks if response is not None else ()
        text = "\n\n".join(b.text for b in blocks if b.kind == "text" and b.text)
        previews.append(
            {
                "line": exchange.line,
                "loop": exchange.loop_label or exchange.loop_key or "",
                "model": exchange.model,
                "text": text[:PREVIEW_CHARS],
                "truncated": len(text) > PREVIEW_CHARS,
                "tool_uses": [b.name or "?" for b in blocks if b.kind == "tool_use"],
                "blocks": len(blocks),
                "output_tokens": exchange.usage.output_tokens if exchange.usage else None,
                "stop_reason": exchange.stop_reason,
                "ended_at": exchange.ended_at,
                "complete": complete,
            }
        )
    return previews
