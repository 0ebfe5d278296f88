"""Message shapes found inside Langfuse observations, whichever framework wrote them.

A Langfuse GENERATION stores the framework's own request and response, often as a JSON
*string*: Chat Completions messages, LangChain messages (`additional_kwargs.tool_calls`,
`type: human|ai|tool`), Anthropic content blocks and Message objects, Responses API items
and whole response objects, Gemini/ADK
`contents` with `parts` (`function_call` / `function_response`, no ids), OTel GenAI
`parts` messages, and ReAct text ("Function Name: … / Function Input: … / Function
Output: …", BeeAI). `normalize_message` reads every one of them.

Formats without call ids get made-up ids that `pair_gemini_contents` and the text reader
compute from the transcript alone, so the same call gets the same id in every request
that re-sends it; the adapter reports how each was paired ("name-order", "text").
"""

from __future__ import annotations

import ast
import hashlib
import re
from typing import Any

import orjson

from ...coerce import dict_or_empty, parse_arguments, str_or_none
from ...model import Block, Message
from . import anthropic, openai_chat, openai_responses, otel_genai

SYNTHETIC_ID = "_loop_inspector_call_id"
"""Key under which a made-up call id is stored on a part that had none."""
# Tuples, not sets: `in` then compares, so an odd value (a list) cannot raise.
RESPONSES_ITEM_TYPES = (
    "function_call",
    "function_call_output",
    "reasoning",
    "message",
    "custom_tool_call",
)
LANGCHAIN_ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}
_TEXT_CALL = re.compile(
    r"Function Name:\s*(?P<name>[^\n]+)\nFunction Input:\s*(?P<input>[^\n]*)"
    r"(?:\nFunction Output:\s*(?P<output>.*?))?(?=\n(?:Thought|Function Name|Final Answer):|\Z)",
    re.DOTALL,
)


def parse_value(value: Any) -> Any:
    """A field Langfuse stored as a JSON string (or a Python repr, LangChain tool inputs)."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text or text[0] not in '[{"':
        return value
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(text)  # literals only: no code runs
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return value


# -- messages -----------------------------------------------------------------------------
def normalize_message(raw: Any) -> Message:
    """One message in any of the shapes above."""
    if not isinstance(raw, dict):
        return otel_genai.normalize_message(raw)
    if _is_responses_item(raw):
        return openai_responses.normalize_item(raw)
    if isinstance(raw.get("parts"), list):
        if _is_gemini(raw["parts"]):
            return _gemini_message(raw)
        return otel_genai.normalize_message(raw)
    if _has_anthropic_blocks(raw.get("content")):
        return anthropic.normalize_message(raw)
    if "additional_kwargs" in raw or str(raw.get("type")) in LANGCHAIN_ROLES:
        raw = langchain_to_chat(raw)
    if raw.get("role") == "tool" and "tool_call_id" not in raw and not _is_text(raw):
        # LangChain callbacks list the tool *definitions* as role "tool" messages.
        return Message("tool", (Block("other", text="tool definition", raw=raw),))
    message = openai_chat.normalize_message(raw)
    if message.role == "assistant":
        return _with_text_calls(message)
    return message


ANTHROPIC_BLOCKS = ("tool_use", "tool_result", "thinking", "redacted_thinking")


def _has_anthropic_blocks(content: Any) -> bool:
    """Anthropic Messages content (Claude via Langfuse's Anthropic integrations)."""
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") in ANTHROPIC_BLOCKS for block in content
    )


def is_content_blocks(value: Any) -> bool:
    """A bare list of content blocks (a stored response that is only its `content`)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, dict) and "type" in v and "role" not in v for v in value)
    )


def _is_text(raw: dict[str, Any]) -> bool:
    return isinstance(raw.get("content"), (str, list))


def _is_responses_item(raw: dict[str, Any]) -> bool:
    if raw.get("type") in RESPONSES_ITEM_TYPES:
        return True
    return isinstance(raw.get("output"), list) and raw.get("object") == "response"


def langchain_to_chat(raw: dict[str, Any]) -> dict[str, Any]:
    """A LangChain message (`type` human/ai/tool, `additional_kwargs.tool_calls`) as Chat."""
    role = raw.get("role") or LANGCHAIN_ROLES.get(str(raw.get("type")), "unknown")
    chat: dict[str, Any] = {"role": role, "content": raw.get("content")}
    extra = dict_or_empty(raw.get("additional_kwargs"))
    calls = extra.get("tool_calls") or raw.get("tool_calls")
    if isinstance(calls, list) and calls:
        chat["tool_calls"] = [_langchain_call(call) for call in calls]
    if raw.get("tool_call_id") is not None:
        chat["tool_call_id"] = raw["tool_call_id"]
    if raw.get("name") is not None and role == "tool":
        chat["name"] = raw["name"]
    return chat


def _langchain_call(call: Any) -> Any:
    """`{id, function: {name, arguments}}` as is; LangChain's `{id, name, args}` as Chat."""
    if not isinstance(call, dict) or isinstance(call.get("function"), dict):
        return call
    arguments = call.get("args")
    return {
        "id": call.get("id"),
        "type": "function",
        "function": {"name": call.get("name"), "arguments": orjson.dumps(arguments).decode()},
    }


# -- Gemini contents (no call ids) --------------------------------------------------------
def _is_gemini(parts: list[Any]) -> bool:
    return any(
        isinstance(p, dict) and "type" not in p and ("text" in p or _gemini_call(p) or _answer(p))
        for p in parts
    )


def _gemini_call(part: dict[str, Any]) -> dict[str, Any] | None:
    call = part.get("function_call", part.get("functionCall"))
    return call if isinstance(call, dict) else None


def _answer(part: dict[str, Any]) -> dict[str, Any] | None:
    answer = part.get("function_response", part.get("functionResponse"))
    return answer if isinstance(answer, dict) else None


def _gemini_message(raw: dict[str, Any]) -> Message:
    role = "assistant" if raw.get("role") == "model" else str(raw.get("role") or "user")
    blocks: list[Block] = []
    for part in raw["parts"]:
        if not isinstance(part, dict):
            blocks.append(Block("text", text=str(part), raw=part))
            continue
        call, answer = _gemini_call(part), _answer(part)
        tool_id = str_or_none(part.get(SYNTHETIC_ID))
        if call is not None:
            blocks.append(
                Block(
                    "tool_use",
                    tool_id=str_or_none(call.get("id")) or tool_id,
                    name=str_or_none(call.get("name")),
                    input=call.get("args"),
                    raw=part,
                )
            )
        elif answer is not None:
            response = answer.get("response")
            failed = isinstance(response, dict) and "error" in response
            blocks.append(
                Block(
                    "tool_result",
                    text=otel_genai.result_text(response),
                    tool_id=str_or_none(answer.get("id")) or tool_id,
                    name=str_or_none(answer.get("name")),
                    is_error=failed,
                    raw=part,
                )
            )
        elif part.get("thought") is True:
            blocks.append(Block("thinking", text=str(part.get("text") or ""), raw=part))
        elif "text" in part:
            blocks.append(Block("text", text=str(part.get("text") or ""), raw=part))
        else:
            blocks.append(Block("other", text=next(iter(part), "part"), raw=part))
    return Message(role, tuple(blocks))


def pair_gemini_contents(contents: list[Any]) -> tuple[list[Any], dict[str, str]]:
    """Give id-less function calls and responses matching made-up ids.

    A response pairs with the call of the same name, in order, in the closest model turn
    before it (Gemini answers a turn's calls in the next user turn). The ids depend on the
    position in the transcript only, so a later request that re-sends the same turns gets
    the same ids. Returns the annotated copy and `{id: "name-order"}`.
    """
    annotated: list[Any] = []
    pairing: dict[str, str] = {}
    last_model_turn: int | None = None
    for index, content in enumerate(contents):
        parts = content.get("parts") if isinstance(content, dict) else None
        if not isinstance(parts, list):
            annotated.append(content)
            continue
        seen: dict[str, int] = {}
        new_parts = []
        for part in parts:
            call = _gemini_call(part) if isinstance(part, dict) else None
            answer = _answer(part) if isinstance(part, dict) and call is None else None
            found = call if call is not None else answer
            if found is None or found.get("id"):
                new_parts.append(part)
                continue
            name = str(found.get("name") or "?")
            occurrence = seen.get(name, 0)
            seen[name] = occurrence + 1
            turn = index if call is not None else last_model_turn
            tool_id = f"{name}@{turn}#{occurrence}"
            pairing[tool_id] = "name-order"
            new_parts.append({**part, SYNTHETIC_ID: tool_id})
        annotated.append({**content, "parts": new_parts})
        if any(_gemini_call(p) for p in parts if isinstance(p, dict)):
            last_model_turn = index
    return annotated, pairing


# -- ReAct text tool calls ----------------------------------------------------------------
def _with_text_calls(message: Message) -> Message:
    """Assistant text holding "Function Name / Function Input / Function Output" blocks
    becomes a tool call and, when the output is written, its result, paired by position."""
    blocks: list[Block] = []
    changed = False
    for block in message.blocks:
        blocks.append(block)  # the text stays as written; the calls follow it
        if block.kind != "text" or "Function Name:" not in block.text:
            continue
        digest = hashlib.sha1(block.text.encode(), usedforsecurity=False).hexdigest()[:10]
        for number, match in enumerate(_TEXT_CALL.finditer(block.text)):
            changed = True
            name = match.group("name").strip()
            tool_id = f"{name}@text-{digest}#{number}"
            arguments = parse_arguments(match.group("input").strip())
            blocks.append(
                Block("tool_use", tool_id=tool_id, name=name, input=arguments, raw=match.group(0))
            )
            output = match.group("output")
            if output is not None:
                blocks.append(
                    Block("tool_result", text=output.strip(), tool_id=tool_id, raw=output)
                )
    return Message(message.role, tuple(blocks)) if changed else message


def text_call_ids(message: Message) -> dict[str, str]:
    """The made-up ids of text tool calls in a message, for the pairing report."""
    return {
        b.tool_id: "text"
        for b in message.blocks
        if b.kind == "tool_use" and b.tool_id and "@text-" in b.tool_id
    }
