"""Langfuse trace exports: `{trace, observations[]}`, rebuilt into the model calls they hold.

Langfuse (langfuse.com) records a trace as a tree of observations: GENERATION (a model
call), TOOL, SPAN, AGENT, CHAIN, EVENT... The export is what the UI's "download trace"
and `GET /api/public/traces/<id>` give: the trace and its observations, `input`/`output`
often JSON *strings*. Also accepted: a bare list of observations, or one per line.
Every choice below was checked against the exports of SOURCES.md section 17.

- A model call is a GENERATION observation that has an input or usage. GENERATION
  observations with neither are lifecycle events some integrations emit (BeeAI's
  `…success-16`/`…finish-16`), not calls. Calls are read in `startTime` order.
- Request and response keep the framework's own shapes (`dialects.langfuse` reads them):
  Chat or LangChain message lists, Responses items and response objects stored as a
  string (OpenAI Agents), Gemini/ADK `{contents, config}` requests and
  `{content: {parts}}` responses, OTel GenAI `parts` messages, ReAct text.
- Usage comes from `usageDetails` (Langfuse's normalised keys: `input`, `output`, cache
  keys such as `input_cache_read` / `prompt_details.cache_read`); `input` is taken as the
  uncached input, Langfuse's convention that the usage types add up to `total`. When the
  stored response is a provider object with its own usage (a Responses object), that
  usage is used instead: it says what is cached.
- Tool runs pair by call id when the framework recorded one. Without ids: Gemini calls and
  responses pair by name and order within a turn ("name-order"); ReAct text calls pair by
  position in the text ("text"). TOOL observations (and SPANs whose output is a LangChain
  tool message) give each tool its start, end and error level; one that names no call id
  is matched to a call by tool name and arguments ("name-input"), and its output is the
  result when no later request carried one. The report shows the method per tool run.
- `level: ERROR` makes a generation a failed call and a tool observation an error result
  (`statusMessage` is the error text).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from traces.core.records import dataclass, field

from ...coerce import dict_or_empty, str_or_none
from ...model import Exchange, LineError, Message, ToolTiming, Usage
from ..dialects import langfuse as lf
from ..dialects import openai_chat, openai_responses, otel_genai
from ..records import Record
from ..timeparse import to_epoch_seconds
from ._index import langfuse_export as scoring
from ._index.langfuse_export import _is_observation, _observations_of
from .base import Adapter, AdapterEvent, Detection
from .registry import register

CACHE_READ_KEYS = (
    "input_cache_read",
    "input_cached_tokens",
    "prompt_details.cache_read",
    "cache_read_input_tokens",
    "cache_read",
)
CACHE_WRITE_KEYS = ("input_cache_creation", "cache_creation_input_tokens", "input_cache_write")
TOOL_SPAN_PREFIXES = ("execute_tool ", "tool.", "tool:")


@dataclass(slots=True, eq=False)
class _Call:
    """A tool call seen so far, for matching tool observations to it."""

    tool_id: str
    name: str | None
    arguments: Any
    matched: bool = False


@dataclass(slots=True, eq=False)
class _Export:
    trace: dict[str, Any] | None = None
    observations: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


@register
class LangfuseExportAdapter(Adapter):
    name = "langfuse"
    label = "Langfuse trace export"
    where = (
        "Exported from Langfuse: the trace page's download button (JSON with the trace and "
        "its observations), `GET /api/public/traces/<id>`, or observations listed with "
        "`GET /api/public/observations?traceId=<id>` (a list, or one per line)."
    )
    markers = ("trace", "observations", "type", "traceId", "startTime", "parentObservationId")
    normalize = staticmethod(lf.normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._export = _Export()
        self._calls: list[_Call] = []

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        found = _observations_of(record.value)
        if found is None:
            yield LineError(record.line, "not a Langfuse trace export or observation")
            return
        trace, observations = found
        if trace is not None and self._export.trace is None:
            self._export.trace = trace
        single = len(observations) == 1 and observations[0] is record.value
        for position, observation in enumerate(observations, start=1):
            where = record.line if single else position
            if not _is_observation(observation):
                yield LineError(where, "observation without type, startTime and traceId; skipped")
                continue
            self._export.observations.append((where, observation))

    def close(self) -> Iterator[AdapterEvent]:
        """Observations arrive in any order; the loop is rebuilt once all are read."""
        ordered = sorted(
            self._export.observations,
            key=lambda item: (str(item[1].get("startTime") or ""), item[0]),
        )
        calls = [o for _, o in ordered if o.get("type") == "GENERATION" and _is_model_call(o)]
        following = {id(o): calls[i + 1] for i, o in enumerate(calls[:-1])}
        for line, observation in ordered:
            kind = observation.get("type")
            if kind == "GENERATION":
                if _is_model_call(observation):
                    yield self._exchange(line, observation, following.get(id(observation)))
            else:
                timing = self._tool_timing(line, observation)
                if timing is not None:
                    yield timing

    # -- generations --------------------------------------------------------------------
    def _exchange(
        self, line: int, observation: dict[str, Any], following: dict[str, Any] | None
    ) -> Exchange:
        request = lf.parse_value(observation.get("input"))
        output = lf.parse_value(observation.get("output"))
        messages, system, tools = _request_parts(request)
        gemini = isinstance(request, dict) and isinstance(request.get("contents"), list)
        pairing: dict[str, Any] = {}
        response, stop_reason, response_usage, raw = _response_parts(output)
        inferred = False
        if output is None and following is not None and not gemini:
            raw = _answer_in_next_request(messages, following)
            if raw is not None:
                response, inferred = lf.normalize_message(raw), True
                stop_reason = "tool_use" if response.tool_uses else "end_turn"
        if gemini:
            messages, pairing = lf.pair_gemini_contents(messages)
            if isinstance(raw, dict) and isinstance(raw.get("parts"), list):
                annotated, more = lf.pair_gemini_contents([*messages, raw])
                raw = annotated[-1]
                pairing.update(more)
                response = lf.normalize_message(raw)
        if isinstance(output, dict) and output.get("object") == "response":
            system = system or output.get("instructions")
            tools = tools or output.get("tools") or ()
        for message in messages:
            pairing.update(lf.text_call_ids(lf.normalize_message(message)))
        self._remember_calls(messages, response)
        failed = observation.get("level") == "ERROR"
        extra: dict[str, Any] = {
            "observation_id": observation.get("id"),
            "observation_name": observation.get("name"),
        }
        if inferred:
            # Some integrations store no output (BeeAI); the next request echoes it.
            extra["response_from_next_request"] = True
        cost = observation.get("costDetails")
        if isinstance(cost, dict) and cost:
            extra["langfuse_cost"] = cost
        trace = self._export.trace or {}
        return Exchange(
            line=line,
            messages=messages,
            normalize=self.normalize,
            system=system,
            tools=tuple(tools) if isinstance(tools, list) else (),
            model=str_or_none(observation.get("model")),
            response=response,
            response_raw=raw,
            stop_reason=stop_reason,
            usage=response_usage or _usage(observation.get("usageDetails")),
            started_at=to_epoch_seconds(observation.get("startTime")),
            ended_at=to_epoch_seconds(observation.get("endTime")),
            status="error" if failed else "ok",
            error=str_or_none(observation.get("statusMessage")) if failed else None,
            extra=extra,
            loop_key=f"langfuse:{observation.get('traceId') or trace.get('id') or ''}",
            loop_label=str_or_none(trace.get("name")) or "Langfuse trace",
            tool_pairing=pairing,
        )

    def _remember_calls(self, messages: list[Any], response: Message | None) -> None:
        known = {call.tool_id for call in self._calls}
        found = [lf.normalize_message(m) for m in messages]
        if response is not None:
            found.append(response)
        for message in found:
            for block in message.tool_uses:
                if block.tool_id and block.tool_id not in known:
                    known.add(block.tool_id)
                    self._calls.append(_Call(block.tool_id, block.name, block.input))

    # -- tool observations --------------------------------------------------------------
    def _tool_timing(self, line: int, observation: dict[str, Any]) -> ToolTiming | None:
        output = lf.parse_value(observation.get("output"))
        chat_result = isinstance(output, dict) and output.get("tool_call_id") is not None
        if observation.get("type") != "TOOL" and not chat_result:
            return None
        name = _tool_name(observation, output if chat_result else None)
        tool_id, pairing = self._match(observation, output if chat_result else None, name)
        if tool_id is None:
            return None
        failed = observation.get("level") == "ERROR"
        text = (
            otel_genai.result_text(output.get("content"))
            if chat_result
            else otel_genai.result_text(output)
        )
        if failed and not text:
            text = str(observation.get("statusMessage") or "")
        return ToolTiming(
            line,
            tool_id,
            name=name,
            started_at=to_epoch_seconds(observation.get("startTime")),
            ended_at=to_epoch_seconds(observation.get("endTime")),
            is_error=failed,
            result_text=text,
            pairing=pairing,
        )

    def _match(
        self, observation: dict[str, Any], chat_result: Any, name: str | None
    ) -> tuple[str | None, Any]:
        """The call a tool observation ran: by its call id, else by name and arguments."""
        if isinstance(chat_result, dict):
            tool_id = str_or_none(chat_result.get("tool_call_id"))
            for call in self._calls:
                if call.tool_id == tool_id:
                    call.matched = True
            return tool_id, "id"
        arguments = lf.parse_value(observation.get("input"))
        open_calls = [c for c in self._calls if not c.matched and c.name == name]
        for call in open_calls:
            if _same_arguments(call.arguments, arguments):
                call.matched = True
                return call.tool_id, "name-input"
        return None, None


def _answer_in_next_request(messages: list[Any], following: dict[str, Any]) -> Any:
    """The assistant message the next request appends right after this request's messages.

    Several consecutive assistant messages (a ReAct agent writing one per step) are joined
    into one, as the model's one answer. None when the next request does not extend this one.
    """
    after, _, _ = _request_parts(lf.parse_value(following.get("input")))
    if len(after) <= len(messages) or after[: len(messages)] != messages:
        return None
    answer = []
    for message in after[len(messages) :]:
        if not (isinstance(message, dict) and message.get("role") == "assistant"):
            break
        answer.append(message)
    if not answer:
        return None
    if len(answer) == 1:
        return answer[0]
    content: list[Any] = []
    for message in answer:
        part = message.get("content")
        content.extend(part if isinstance(part, list) else [{"type": "text", "text": str(part)}])
    return {"role": "assistant", "content": content}


def _is_model_call(observation: dict[str, Any]) -> bool:
    usage = observation.get("usageDetails")
    return observation.get("input") is not None or (isinstance(usage, dict) and bool(usage))


def _tool_name(observation: dict[str, Any], chat_result: Any) -> str | None:
    said = chat_result.get("name") if isinstance(chat_result, dict) else None
    if isinstance(said, str):
        return said
    name = str_or_none(observation.get("name"))
    for prefix in TOOL_SPAN_PREFIXES:
        if name and name.startswith(prefix):
            return name[len(prefix) :]
    return name


def _same_arguments(expected: Any, actual: Any) -> bool:
    if expected == actual:
        return True
    empty: tuple[Any, ...] = ({}, None, "", [])
    return expected in empty and actual in empty


def _request_parts(request: Any) -> tuple[list[Any], Any, Any]:
    """(messages, system, tools) of a generation's stored input."""
    if isinstance(request, list):
        # LangChain callbacks append the tool *definitions* as role "tool" messages.
        tools = [m["content"] for m in request if _is_tool_definition(m)]
        messages = [m for m in request if not _is_tool_definition(m)]
        return messages, None, tools
    if isinstance(request, str):
        return [{"role": "user", "content": request}], None, ()
    if not isinstance(request, dict):
        return [], None, ()
    if isinstance(request.get("contents"), list):  # Gemini / Google ADK
        config = dict_or_empty(request.get("config"))
        system = config.get("system_instruction", config.get("systemInstruction"))
        return list(request["contents"]), system, _gemini_tools(config.get("tools"))
    if isinstance(request.get("messages"), list):
        return list(request["messages"]), request.get("system"), request.get("tools") or ()
    if "input" in request:  # a Responses request
        items = openai_responses.input_items(request.get("input"))
        return items, request.get("instructions"), request.get("tools") or ()
    return [request], None, ()


def _is_tool_definition(message: Any) -> bool:
    if not isinstance(message, dict) or message.get("role") != "tool":
        return False
    content = message.get("content")
    return isinstance(content, dict) and content.get("type") == "function"


def _gemini_tools(tools: Any) -> list[Any]:
    """Gemini `tools: [{function_declarations: [...]}]` as one entry per function."""
    if not isinstance(tools, list):
        return []
    flat: list[Any] = []
    for tool in tools:
        declarations = None
        if isinstance(tool, dict):
            declarations = tool.get("function_declarations", tool.get("functionDeclarations"))
        flat.extend(declarations if isinstance(declarations, list) else [tool])
    return flat


def _response_parts(output: Any) -> tuple[Message | None, str | None, Any, Any]:
    """(response, stop reason, usage it reports, raw message) of a generation's output."""
    if output is None:
        return None, None, None, None
    if isinstance(output, dict) and output.get("object") == "response":
        reply = openai_responses.read_response(output)
        return reply.message, reply.stop_reason, reply.usage, output
    if isinstance(output, dict) and isinstance(output.get("choices"), list):
        reply = openai_chat.read_response(output)
        return reply.message, reply.stop_reason, reply.usage, output
    raw = output
    finish = None
    if isinstance(output, dict) and isinstance(output.get("candidates"), list):
        first = output["candidates"][0] if output["candidates"] else {}
        raw = first.get("content") if isinstance(first, dict) else None
        finish = first.get("finishReason") if isinstance(first, dict) else None
    elif isinstance(output, dict) and isinstance(output.get("content"), dict):
        raw, finish = output["content"], output.get("finish_reason")  # Google ADK LlmResponse
    elif lf.is_content_blocks(output):
        raw = {"role": "assistant", "content": output}
    elif isinstance(output, dict) and output.get("type") == "message" and "content" in output:
        raw = {"role": "assistant", "content": output["content"]}  # an Anthropic Message
        finish = output.get("stop_reason")
    elif isinstance(output, list):
        replies = [m for m in output if isinstance(m, dict)]
        raw = replies[-1] if replies else None
    elif isinstance(output, str):
        raw = {"role": "assistant", "content": output}
    if not isinstance(raw, dict):
        return None, None, None, output
    message = lf.normalize_message(raw)
    if message.role in ("unknown", "model"):
        message = Message("assistant", message.blocks)
    cut = finish in ("MAX_TOKENS", "max_tokens")
    stop = "tool_use" if message.tool_uses else ("max_tokens" if cut else None)
    return message, stop or "end_turn", None, raw


def _usage(details: Any) -> Usage | None:
    if not isinstance(details, dict) or not details:
        return None

    def first(keys: Sequence[str]) -> int:
        for key in keys:
            value = details.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return max(0, value)
        return 0

    return Usage(
        input_tokens=first(("input", "prompt_tokens", "input_tokens")),
        output_tokens=first(("output", "completion_tokens", "output_tokens")),
        cache_read_tokens=first(CACHE_READ_KEYS),
        cache_write_tokens=first(CACHE_WRITE_KEYS),
    )
