"""Normalised messages as plain JSON: ingest stores what the call page shows, so no page
reads raw provider messages with an adapter again (and sees what ingest saw)."""

from __future__ import annotations

from typing import Any, get_args

from .model import Block, BlockKind, Message

RAW_SHOWN_FOR = frozenset(get_args(BlockKind)) - {"text", "tool_use", "tool_result", "thinking"}
"""Block kinds whose provider JSON the page shows (it has no neutral fields for them);
the others keep only their neutral fields, so a stored message adds little to the raw one."""


def message_json(message: Message) -> dict[str, Any]:
    """A message as JSON, fields at their defaults left out to keep blobs small."""
    return {"role": message.role, "blocks": [_block_json(block) for block in message.blocks]}


def _block_json(block: Block) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": block.kind}
    if block.text:
        out["text"] = block.text
    if block.tool_id is not None:
        out["tool_id"] = block.tool_id
    if block.name is not None:
        out["name"] = block.name
    if block.input is not None:
        out["input"] = block.input
    if block.is_error:
        out["is_error"] = True
    if block.raw is not None and block.kind in RAW_SHOWN_FOR:
        out["raw"] = block.raw
    return out


def message_from_json(value: Any) -> Message | None:
    """The message `message_json` stored; None for anything else (a missing blob)."""
    if not isinstance(value, dict):
        return None
    blocks = value.get("blocks")
    return Message(
        role=str(value.get("role") or "?"),
        blocks=tuple(
            _block_from_json(block)
            for block in (blocks if isinstance(blocks, list) else ())
            if isinstance(block, dict)
        ),
    )


def _block_from_json(value: dict[str, Any]) -> Block:
    return Block(
        kind=value.get("kind") or "other",
        text=value.get("text", ""),
        tool_id=value.get("tool_id"),
        name=value.get("name"),
        input=value.get("input"),
        is_error=value.get("is_error") is True,
        raw=value.get("raw"),
    )
