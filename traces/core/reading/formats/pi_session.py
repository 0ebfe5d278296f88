"""pi coding agent sessions: `~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl`.

pi (badlogic/pi-mono, packages/coding-agent) logs messages, not requests; this adapter
rebuilds the model calls they imply. Every choice below was checked against the real
sessions of ../shared/agents SOURCES.md section 19 and against pi's own session manager
(`session-manager.ts` `buildSessionContext`, `messages.ts` `convertToLlm`).

- One JSON record per line: a `session` header (id, cwd, provider, modelId, thinkingLevel,
  `branchedFrom` in old files, `version` and `parentSession` in v3), then `message`,
  `model_change`, `thinking_level_change` and `compaction` records (v3 adds
  `branch_summary`, `custom_message`, `custom`, `label`, `session_info`). One old file has
  two records on one line; the JSONL reader splits them (`records.py`).
- A model call is one `assistant` message (every one is a response of its own, with its own
  usage); its request is every context message before it, kept in pi's own shape and read
  by `normalize_message`, which turns them into what pi sends: `toolCall` blocks are tool
  uses, `toolResult` messages are tool results (role user, as the Anthropic API gets them;
  consecutive results are one message `{"role": "toolResults", "results": [...]}`, since
  pi's Anthropic provider sends them in one user turn),
  `bashExecution` (a command the user ran with `!`, not a model tool call) is user text
  ("Ran `cmd`" and its output, pi's `bashExecutionToText`), `custom`, `branchSummary` and
  `compactionSummary` messages are user text with pi's prefixes. A `bashExecution` with
  `excludeFromContext` (`!!`) is kept out of the request, as pi does.
- Aborted and errored responses (`stopReason` aborted/error, usually all-zero usage and an
  `errorMessage`) are failed calls (status error, the error text kept); all-zero usage is
  read as unknown, not as zero tokens. Their tool calls never ran, so they dangle. They
  stay in later requests: the pi of these files replayed them (line 848 of
  before-compaction is the API refusing such a replay); pi only dropped them from the
  context in 2026-01.
- `stopReason` becomes the Anthropic names the rules read (toolUse -> tool_use, stop ->
  end_turn, length -> max_tokens); pi's own word is kept in `extra.pi_stop_reason`. Usage:
  input/output/cacheRead/cacheWrite as recorded (pi's input excludes the cache, as
  Anthropic's does); the store's cost is `extra.cost_usd`; `api` and `provider` are kept.
- Times: a call starts at its message's own `timestamp` (epoch ms, set when the request
  left) and ends at the record's ISO `timestamp` (written when the response was saved).
  A `toolResult` yields a `ToolTiming` from its call's response to the result's record.
- `compaction`: the next request starts again from the summary (pi's compactionSummary
  message), then the messages kept from `firstKeptEntryIndex` (old files: the 0-based
  index of the record in the file, header included) or `firstKeptEntryId` (v3) up to the
  compaction, as `buildSessionContext` does; the next call gets `extra.compaction`
  (summary, tokensBefore, kept messages, the record's line).
- Model switches (`model_change`) and thinking level changes go on the next call
  (`extra.model_changes`, `extra.thinking_level`, the level in force for that call).
- v3 (`id`/`parentId`): a record whose parent is not the previous record continues an
  earlier point (the user went back with /tree): the request is cut back to that point,
  and `extra.branched_from_entry` says so. Old files have no ids and are one line of
  records.
- The first call carries `extra.agent_session` (agent pi, the header's id and cwd) and
  `extra.branched_from` (the session file it was forked from), when known.
- A file with no assistant message (a session never answered) has no call:
  `no_call_notice` says what it is.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ...coerce import dict_or_empty, int_or_zero, str_or_none, text_of
from ...model import Block, Exchange, LineError, Message, ToolTiming, Usage
from ..records import Record
from ..timeparse import to_epoch_seconds
from ..transcript import TranscriptView
from ._index import pi_session as scoring
from .base import Adapter, AdapterEvent, Detection
from .registry import register

RECORD_TYPES = (
    "session",
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom_message",
    "custom",
    "label",
    "session_info",
)
ROLES = ("user", "assistant", "toolResult", "bashExecution", "custom", "hookMessage")
STOP_REASONS = {"toolUse": "tool_use", "stop": "end_turn", "length": "max_tokens"}
FAILED = ("aborted", "error")
COMPACTION_PREFIX = (
    "The conversation history before this point was compacted into the following "
    "summary:\n\n<summary>\n"
)
BRANCH_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)


# -- pi messages as the model saw them -------------------------------------------------
def _content_blocks(content: Any) -> tuple[Block, ...]:
    if isinstance(content, str):
        return (Block("text", text=content, raw=content),)
    blocks: list[Block] = []
    for item in content if isinstance(content, list) else ():
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "text":
            blocks.append(Block("text", text=str(item.get("text") or ""), raw=item))
        elif kind == "thinking":
            blocks.append(Block("thinking", text=str(item.get("thinking") or ""), raw=item))
        elif kind == "toolCall":
            blocks.append(
                Block(
                    "tool_use",
                    tool_id=str_or_none(item.get("id")),
                    name=str_or_none(item.get("name")),
                    input=item.get("arguments"),
                    raw=item,
                )
            )
        elif kind == "image":
            blocks.append(Block("image", text="[image]", raw=item))
        else:
            blocks.append(Block("other", text=str(kind or "block"), raw=item))
    return tuple(blocks)


def bash_execution_text(raw: dict[str, Any]) -> str:
    """What pi sends for a user's `!` command (`bashExecutionToText`)."""
    text = f"Ran `{raw.get('command') or ''}`\n"
    output = raw.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    code = raw.get("exitCode")
    if raw.get("cancelled") is True:
        text += "\n\n(command cancelled)"
    elif isinstance(code, int) and code != 0:
        text += f"\n\nCommand exited with code {code}"
    if raw.get("truncated") is True and raw.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {raw['fullOutputPath']}]"
    return text


def normalize_message(raw: Any) -> Message:
    """One pi context message as a canonical message (what pi's `convertToLlm` sends)."""
    if not isinstance(raw, dict):
        return Message("unknown", (Block("other", text=str(raw), raw=raw),))
    role = raw.get("role")
    if role == "assistant":
        return Message("assistant", _content_blocks(raw.get("content")))
    if role == "toolResults":
        results = raw.get("results")
        blocks = [normalize_message(r).blocks for r in (results or ())]
        return Message("user", tuple(b for group in blocks for b in group))
    if role == "toolResult":
        block = Block(
            "tool_result",
            text=text_of(raw.get("content")),
            tool_id=str_or_none(raw.get("toolCallId")),
            name=str_or_none(raw.get("toolName")),
            is_error=raw.get("isError") is True,
            raw=raw,
        )
        return Message("user", (block,))
    if role == "bashExecution":
        return Message("user", (Block("text", text=bash_execution_text(raw), raw=raw),))
    if role == "compactionSummary":
        text = f"{COMPACTION_PREFIX}{raw.get('summary') or ''}\n</summary>"
        return Message("user", (Block("text", text=text, raw=raw),))
    if role == "branchSummary":
        text = f"{BRANCH_PREFIX}{raw.get('summary') or ''}</summary>"
        return Message("user", (Block("text", text=text, raw=raw),))
    return Message("user", _content_blocks(raw.get("content")))


def _usage(raw: Any) -> Usage | None:
    usage = dict_or_empty(raw)
    if not usage:
        return None
    return Usage(
        input_tokens=int_or_zero(usage.get("input")),
        output_tokens=int_or_zero(usage.get("output")),
        cache_read_tokens=int_or_zero(usage.get("cacheRead")),
        cache_write_tokens=int_or_zero(usage.get("cacheWrite")),
    )


@register
class PiSessionAdapter(Adapter):
    name = "pi-session"
    label = "pi coding agent session"
    where = (
        "pi writes one file per session to "
        "~/.pi/agent/sessions/--<working directory>--/<timestamp>_<session id>.jsonl."
    )
    markers = ("type", "timestamp", "message", "id", "parentId", "cwd")
    normalize = staticmethod(normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._context: list[Any] = []
        self._before: dict[str, tuple[list[Any], int]] = {}
        """Each entry (by id, or by index for old files): the context just before it."""
        self._after: dict[str, tuple[list[Any], int]] = {}
        self._index = 0
        self._last_id: str | None = None
        self._header: dict[str, Any] = {}
        self._session_id: str | None = None
        self._last_time: float | None = None
        self._thinking: str | None = None
        self._notes: dict[str, Any] = {}
        self._calls = 0
        self._prompts = 0
        self._tool_started: dict[str, float | None] = {}

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        if not isinstance(value, dict):
            yield LineError(record.line, "expected a JSON object (one pi session record)")
            return
        kind = value.get("type")
        if kind not in RECORD_TYPES:
            yield LineError(record.line, f"not a pi session record (type {kind!r})")
            return
        index = str(self._index)
        self._index += 1
        if kind == "session":
            self._read_header(value)
            return
        entry_id = str_or_none(value.get("id"))
        self._follow_parent(value, entry_id)
        before = (self._context, len(self._context))
        self._before[index] = before
        if entry_id:
            self._before[entry_id] = before
        yield from self._entry(record.line, kind, value)
        after = (self._context, len(self._context))
        if entry_id:
            self._after[entry_id] = after
            self._last_id = entry_id
        moment = to_epoch_seconds(value.get("timestamp"))
        if moment is not None:
            self._last_time = moment

    def no_call_notice(self) -> str | None:
        if self._calls:
            return None
        return (
            f"This is a pi session ({self._session_id or 'no header'}) with no model response: "
            f"{self._prompts} user message(s) were never answered. Upload a session file "
            "whose requests were answered."
        )

    # -- records --------------------------------------------------------------------------
    def _read_header(self, value: dict[str, Any]) -> None:
        self._header = value
        self._session_id = str_or_none(value.get("id"))
        self._thinking = str_or_none(value.get("thinkingLevel"))

    def _follow_parent(self, value: dict[str, Any], entry_id: str | None) -> None:
        """v3: an entry whose parent is not the previous entry continues an earlier point."""
        if entry_id is None or "parentId" not in value:
            return
        parent = str_or_none(value.get("parentId"))
        if parent == self._last_id:
            return
        anchor = self._after.get(parent) if parent else None
        items, length = anchor if anchor is not None else ([], 0)
        self._context = list(items[:length])
        self._notes["branched_from_entry"] = parent

    def _entry(self, line: int, kind: str, value: dict[str, Any]) -> Iterator[AdapterEvent]:
        if kind == "message":
            yield from self._message(line, value)
        elif kind == "compaction":
            self._compaction(line, value)
        elif kind == "model_change":
            change = {k: value[k] for k in ("provider", "modelId", "timestamp") if k in value}
            self._notes.setdefault("model_changes", []).append(change)
        elif kind == "thinking_level_change":
            self._thinking = str_or_none(value.get("thinkingLevel"))
        elif kind == "branch_summary":
            summary = {"role": "branchSummary", "summary": value.get("summary")}
            self._context.append({**summary, "fromId": value.get("fromId")})
        elif kind == "custom_message":
            self._context.append(
                {"role": "custom", "content": value.get("content"), **_custom_type(value)}
            )
        # custom, label, session_info: the extension's or the user's notes, not context

    def _message(self, line: int, value: dict[str, Any]) -> Iterator[AdapterEvent]:
        message = value.get("message")
        if not isinstance(message, dict):
            yield LineError(line, "a 'message' record without a 'message' object")
            return
        role = message.get("role")
        if role not in ROLES:
            yield LineError(line, f"a pi message with an unknown role {role!r}; skipped")
            return
        if role == "assistant":
            if not isinstance(message.get("content"), list):
                yield LineError(line, "an assistant message whose content is not a list")
                return
            yield self._call(line, value, message)
            self._context.append(message)
            return
        if role == "toolResult":
            tool_id = str_or_none(message.get("toolCallId"))
            if tool_id is None:
                yield LineError(line, "a toolResult without a toolCallId; not paired")
                return
            self._add_result(message)
            yield ToolTiming(
                line,
                tool_id,
                str_or_none(message.get("toolName")),
                started_at=self._tool_started.pop(tool_id, None),
                ended_at=to_epoch_seconds(value.get("timestamp")),
                is_error=message.get("isError") is True,
                result_text=text_of(message.get("content")),
            )
            return
        if role == "bashExecution" and message.get("excludeFromContext") is True:
            self._notes.setdefault("excluded_bash_commands", []).append(message.get("command"))
            return
        if role == "user":
            self._prompts += 1
        self._context.append(message)

    def _add_result(self, message: dict[str, Any]) -> None:
        """Consecutive results go in one user message, as pi sends them to Anthropic. No
        request holds the last item yet (results follow the response), so it may grow."""
        last = self._context[-1] if self._context else None
        role = last.get("role") if isinstance(last, dict) else None
        if role == "toolResult" and isinstance(last, dict):
            self._context[-1] = {"role": "toolResults", "results": [last, message]}
        elif role == "toolResults" and isinstance(last, dict):
            last["results"].append(message)
        else:
            self._context.append(message)

    def _compaction(self, line: int, value: dict[str, Any]) -> None:
        """The next request starts from the summary and the messages kept (pi's
        `buildSessionContext`)."""
        first = value.get("firstKeptEntryId", value.get("firstKeptEntryIndex"))
        anchor = self._before.get(str(first)) if isinstance(first, (str, int)) else None
        found = anchor is not None and anchor[0] is self._context
        # Not found (an id from another branch): keep the context whole, nothing is lost.
        kept = self._context[anchor[1] :] if found and anchor else list(self._context)
        summary = {
            "role": "compactionSummary",
            "summary": value.get("summary"),
            "tokensBefore": value.get("tokensBefore"),
            "timestamp": value.get("timestamp"),
        }
        self._context = [summary, *kept]
        self._notes["compaction"] = {
            "line": line,
            "tokens_before": value.get("tokensBefore"),
            "first_kept_entry": first,
            "kept_messages": len(kept),
            "first_kept_found": found,
            "summary": value.get("summary"),
        }

    def _call(self, line: int, value: dict[str, Any], message: dict[str, Any]) -> Exchange:
        pi_stop = str_or_none(message.get("stopReason"))
        failed = pi_stop in FAILED
        usage = _usage(message.get("usage"))
        if failed and usage is not None and not usage.total_input_tokens + usage.output_tokens:
            usage = None  # an aborted request's zeros say nothing about what it used
        ended = to_epoch_seconds(value.get("timestamp"))
        started = to_epoch_seconds(message.get("timestamp"))
        if started is None or (ended is not None and started > ended):
            started = self._last_time
        extra: dict[str, Any] = {"pi_stop_reason": pi_stop}
        for key in ("api", "provider"):
            if isinstance(message.get(key), str):
                extra[key] = message[key]
        cost = dict_or_empty(dict_or_empty(message.get("usage")).get("cost")).get("total")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool):
            extra["cost_usd"] = cost
        if self._thinking:
            extra["thinking_level"] = self._thinking
        if self._calls == 0:
            extra.update(self._first_call_extra())
        extra.update(self._notes)
        self._notes = {}
        self._calls += 1
        response = normalize_message(message)
        for block in response.tool_uses:
            if block.tool_id:
                self._tool_started[block.tool_id] = ended
        error = str_or_none(message.get("errorMessage"))
        return Exchange(
            line=line,
            messages=TranscriptView(self._context, len(self._context)),
            normalize=self.normalize,
            model=str_or_none(message.get("model")),
            response=response,
            response_raw=message,
            stop_reason=STOP_REASONS.get(pi_stop or "", pi_stop),
            usage=usage,
            started_at=started,
            ended_at=ended,
            status="error" if failed else "ok",
            error=error or (f"response {pi_stop}" if failed else None),
            extra=extra,
            loop_key=f"pi:{self._session_id or self.source_name}",
            loop_label="pi session",
        )

    def _first_call_extra(self) -> dict[str, Any]:
        header = self._header
        session: dict[str, Any] = {"agent": "pi"}
        if self._session_id:
            session["session_id"] = self._session_id
        if isinstance(header.get("cwd"), str) and header["cwd"]:
            session["project"] = header["cwd"]
        extra: dict[str, Any] = {"agent_session": session}
        parent = header.get("branchedFrom") or header.get("parentSession")
        if isinstance(parent, str):
            extra["branched_from"] = parent
        if isinstance(header.get("version"), int):
            extra["pi_session_version"] = header["version"]
        return extra


def _custom_type(value: dict[str, Any]) -> dict[str, Any]:
    kind = value.get("customType")
    return {"customType": kind} if isinstance(kind, str) else {}
