"""Server-side compaction: a request that starts from a compaction block keeps its loop.

After an Anthropic `compaction` block (or a Responses `compaction` item) the API ignores
what came before it, and clients drop it: the next request starts from the block, so its
first message differs from the loop's and prefix matching alone would open a new loop.
The blocks a response returned are remembered here with their loop; the call that first
starts from one is marked (`extra.compaction`).
"""

from __future__ import annotations

from typing import Any

from ..model import Exchange, Message
from .loops import LoopState
from .prefixes import key

COMPACTION_LOOKAHEAD = 3
"""Messages at the start of a request searched for a compaction block."""


def is_compaction(block: Any) -> bool:
    raw = block.raw
    return block.kind == "other" and isinstance(raw, dict) and raw.get("type") == "compaction"


class Compactions:
    """Compaction blocks responses returned, each with the loop that returned it."""

    def __init__(self) -> None:
        self._loops: dict[bytes, LoopState] = {}
        """Compaction blocks a response returned, to the loop whose next request starts
        from one (the messages before it dropped, so the first message differs)."""

    def leading(self, exchange: Exchange) -> bytes | None:
        """The server-side compaction block this request starts from, if any.

        The block is among the first messages: only those are looked at, so long loops
        stay linear.
        """
        if not self._loops:
            return None
        found = None
        for raw in list(exchange.messages[:COMPACTION_LOOKAHEAD]):
            for block in exchange.normalize(raw).blocks:
                if is_compaction(block):
                    found = key(block.raw)
        return found

    def loop_of(self, compaction: bytes) -> LoopState | None:
        """The loop whose response returned this compaction block."""
        return self._loops.get(compaction)

    def starts_from(
        self, loop: LoopState, leading: bytes | None, appended: tuple[Message, ...]
    ) -> bool:
        """Whether this request is the loop's first from a compaction block it had not
        started from yet (at its head, or appended by a client that keeps all history)."""
        found = leading
        if self._loops:
            carried = [key(b.raw) for m in appended for b in m.blocks if is_compaction(b)]
            found = carried[-1] if carried else leading
        if found is None or found in loop.compactions:
            return False
        loop.compactions.add(found)
        return True

    def remember(self, response: Message | None, loop: LoopState) -> None:
        """Note the compaction blocks a response returned."""
        for block in response.blocks if response is not None else ():
            if is_compaction(block):
                self._loops[key(block.raw)] = loop
