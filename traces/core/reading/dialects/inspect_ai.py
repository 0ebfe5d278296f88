"""Inspect AI's message dialect: ChatMessages, content parts, attachments, usage.

Follows `inspect_ai/model/_chat_message.py` (roles system/user/assistant/tool; assistant
`tool_calls` `{id, function, arguments}` with arguments already parsed; tool messages with
`tool_call_id`, `function` and an optional `error`), its content types (text, reasoning,
image/audio/video/document, a provider-run `tool_use`) and `ModelUsage`.

Large strings are stored once per sample in `attachments` and referenced as
`attachment://<hash>`; the raw messages keep the references (cheap to compare and
store) and the normaliser resolves them when a message is first shown.

Usage (`output.usage`, Inspect's `ModelUsage`): `input_tokens`, `output_tokens`,
`input_tokens_cache_read`, `input_tokens_cache_write`. Whether `input_tokens` includes
the cached tokens depends on the Inspect version and provider: Inspect 0.3.184
(28 February 2026, "normalize handling of cached tokens in ModelUsage") made it always
exclude them; before, OpenAI-style providers reported the whole prompt (in the corpus'
0.3.95 logs 1,568 input tokens with 1,024 cache reads equal the raw `prompt_tokens`
1,568) while Anthropic reported it without cache. The rule applied, in order:
1. the raw provider usage in `call.response` decides when present (input equal to the
   whole raw prompt: inclusive; input plus cache equal to it: exclusive);
2. Inspect >= 0.3.184: exclusive;
3. cached tokens exceeding input_tokens: exclusive (they cannot be included);
4. an Anthropic/Claude model: exclusive;
5. otherwise (older Inspect, OpenAI-style provider, or no version): inclusive.
Inclusive counts have the cache reads and writes subtracted; the rule used is kept in
`Exchange.extra["usage_rule"]`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ...coerce import non_negative, str_or_none
from ...model import Block, Message, Usage

ATTACHMENT_PREFIX = "attachment://"
ATTACHMENT_REF = re.compile(r"attachment://([0-9A-Za-z_-]+)")
NORMALISED_USAGE_VERSION = (0, 3, 184)
STOP_REASONS = {"tool_calls": "tool_use", "stop": "end_turn", "max_tokens": "max_tokens"}
MEDIA_PARTS = {"image", "audio", "video", "document"}

Attachments = Mapping[str, Any]


def stop_reason(raw: Any, response: Message | None) -> str | None:
    """The canonical stop reason; a reply holding tool calls stopped for tools."""
    if response is not None and response.tool_uses:
        return "tool_use"
    if not isinstance(raw, str):
        return None
    return STOP_REASONS.get(raw, raw)


# -- usage -------------------------------------------------------------------------------
def inspect_usage(
    raw: Any, call: Any, inspect_version: tuple[int, ...] | None, model: str | None
) -> tuple[Usage | None, str]:
    """Usage with `input_tokens` uncached, and the rule that decided it (module docstring).

    `model` is the call's model (else the log's), `inspect_version` the log's Inspect."""
    if not isinstance(raw, dict):
        return None, ""
    reported = non_negative(raw.get("input_tokens"))
    cache_read = non_negative(raw.get("input_tokens_cache_read"))
    cache_write = non_negative(raw.get("input_tokens_cache_write"))
    output = non_negative(raw.get("output_tokens"))
    cached = cache_read + cache_write
    rule = ""
    uncached = reported
    if cached:
        inclusive, rule = _input_includes_cache(reported, cached, call, inspect_version, model)
        if inclusive:
            uncached = max(0, reported - cached)
    usage = Usage(
        input_tokens=uncached,
        output_tokens=output,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
    )
    return usage, rule


def _input_includes_cache(
    reported: int,
    cached: int,
    call: Any,
    version: tuple[int, ...] | None,
    model: str | None,
) -> tuple[bool, str]:
    total = _raw_prompt_total(call)
    if total is not None and reported == total:
        return True, "raw provider usage: input_tokens counts the whole prompt, cache included"
    if total is not None and reported + cached == total:
        return False, "raw provider usage: input_tokens excludes the cached tokens"
    if version is not None and version >= NORMALISED_USAGE_VERSION:
        return False, "Inspect >= 0.3.184 reports input_tokens without cached tokens"
    if cached > reported:
        return False, "cached tokens exceed input_tokens, so they cannot be included in it"
    name = (model or "").lower()
    if "anthropic" in name or "claude" in name:
        return False, "Inspect's Anthropic provider reports input_tokens without cache"
    return True, "Inspect < 0.3.184 counted cached tokens inside input_tokens"


def _raw_prompt_total(call: Any) -> int | None:
    """The whole prompt size according to the provider's own usage, when recorded."""
    response = call.get("response") if isinstance(call, dict) else None
    if not isinstance(response, dict):
        return None
    usage = response.get("usage")
    if isinstance(usage, dict):
        prompt = usage.get("prompt_tokens")
        if isinstance(prompt, int):  # Chat Completions: includes cache
            return prompt
        if "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage:
            parts = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
            return sum(non_negative(usage.get(k)) for k in parts)  # Anthropic: parts are disjoint
        prompt = usage.get("input_tokens")
        if isinstance(prompt, int):  # Responses API: includes cache
            return prompt
    metadata = response.get("usage_metadata")
    prompt = metadata.get("prompt_token_count") if isinstance(metadata, dict) else None
    return prompt if isinstance(prompt, int) else None  # Gemini: includes cached content


# -- messages ---------------------------------------------------------------------------
def normalize_message(raw: Any, attachments: Attachments | None = None) -> Message:
    """An Inspect ChatMessage (system, user, assistant with tool_calls, tool) as a Message."""
    if not isinstance(raw, dict):
        return Message("unknown", (Block("other", text=str(raw), raw=raw),))
    role = str(raw.get("role") or "unknown")
    attachments = attachments or {}
    if role == "tool":
        return Message("tool", (_tool_result(raw, attachments),))
    blocks = list(content_blocks(raw.get("content"), attachments))
    if role == "assistant":
        calls = raw.get("tool_calls")
        if isinstance(calls, list):
            blocks.extend(_tool_use(call, attachments) for call in calls)
    return Message(role, tuple(blocks))


def content_blocks(content: Any, attachments: Attachments) -> Iterator[Block]:
    """Blocks of a ChatMessage's content: a string or a list of content parts."""
    if isinstance(content, str):
        if content:
            yield Block("text", text=resolve(content, attachments), raw=content)
        return
    if not isinstance(content, list):
        return
    for part in content:
        yield _content_part(part, attachments)


def _content_part(part: Any, attachments: Attachments) -> Block:
    if isinstance(part, str):
        return Block("text", text=resolve(part, attachments), raw=part)
    if not isinstance(part, dict):
        return Block("other", text=str(part), raw=part)
    kind = part.get("type")
    if kind == "text":
        return Block("text", text=resolve(str(part.get("text") or ""), attachments), raw=part)
    if kind == "reasoning":
        if part.get("redacted"):
            return Block("redacted_thinking", text=str(part.get("summary") or ""), raw=part)
        text = part.get("reasoning") or part.get("summary") or ""
        return Block("thinking", text=resolve(str(text), attachments), raw=part)
    if kind in MEDIA_PARTS:
        return Block("image", text=f"[{kind}]", raw=part)
    if kind == "tool_use":  # a tool the provider ran itself (web search...): no result to pair
        return Block("other", text=f"[server tool {part.get('name') or ''}]".strip(), raw=part)
    return Block("other", text=f"[{kind or 'content'}]", raw=part)


def _tool_use(call: Any, attachments: Attachments) -> Block:
    if not isinstance(call, dict):
        return Block("other", text=str(call), raw=call)
    return Block(
        "tool_use",
        tool_id=str_or_none(call.get("id")),
        name=str_or_none(call.get("function")),
        input=resolve_deep(call.get("arguments"), attachments),
        raw=call,
    )


def _tool_result(raw: dict[str, Any], attachments: Attachments) -> Block:
    """A tool message; Inspect sends an error to the model as "Error: <message>"."""
    error = raw.get("error")
    if isinstance(error, dict) and error.get("message"):
        text = f"Error: {resolve(str(error['message']), attachments)}"
    else:
        text = content_text(raw.get("content"), attachments)
    return Block(
        "tool_result",
        text=text,
        tool_id=str_or_none(raw.get("tool_call_id")),
        name=str_or_none(raw.get("function")),
        is_error=error is not None,
        raw=raw,
    )


def content_text(content: Any, attachments: Attachments) -> str:
    """Plain text of a content string or content-part list."""
    return "\n".join(block.text for block in content_blocks(content, attachments) if block.text)


def resolve(text: str, attachments: Attachments) -> str:
    """`attachment://<hash>` references replaced by the attached text (unknown ones kept)."""
    if not attachments or ATTACHMENT_PREFIX not in text:
        return text
    if text.startswith(ATTACHMENT_PREFIX):
        found = attachments.get(text[len(ATTACHMENT_PREFIX) :])
        if found is not None:
            return str(found)
    return ATTACHMENT_REF.sub(lambda m: str(attachments.get(m.group(1), m.group(0))), text)


def resolve_deep(value: Any, attachments: Attachments) -> Any:
    """A copy of a small JSON value (tool arguments, tool definitions) with references resolved."""
    if not attachments:
        return value
    if isinstance(value, str):
        return resolve(value, attachments)
    if isinstance(value, dict):
        return {key: resolve_deep(item, attachments) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve_deep(item, attachments) for item in value]
    return value
