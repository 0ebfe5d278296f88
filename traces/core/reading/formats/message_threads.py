"""Anthropic's server-held message threads: a request that continues a thread sends only
the new turn, and the transcript the model saw is rebuilt from the thread.

The Anthropic SDK's tool runner (2.14 and later) asks the server to hold the conversation
(`anthropic-beta: message-threads-…`): its first request says `thread: {"type":
"create"}` and sends the whole history; each later one says `thread: {"type":
"continue", "previous_message_id": <the last reply's id>}` and sends only the messages
after that reply (the tool results), without `system` and `tools`, which the server takes
from the thread. Read as sent, each later request looks like a new loop whose tool
results answer calls it never echoed (a false `missing-tool-use-echo`). As with the
Responses API's `previous_response_id` (`openai_responses`), when the reply named is in
the same file the request's transcript is rebuilt as that request's transcript + that
reply + the new messages, and its `system` and `tools` are the thread's; `extra` says
which reply it continued, how many messages it inherited, or that the reply is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from traces.core.records import dataclass, replace

from .request_log import RecordedCall

THREAD_FIELDS = ("system", "tools")
"""What a `continue` leaves out: the server takes it from the thread."""


@dataclass(frozen=True, slots=True)
class ThreadTurn:
    """One call's contribution to a thread: its new messages, then its reply. Turns link to
    their parent instead of copying the transcript, so memory stays linear in the turns."""

    parent: ThreadTurn | None
    messages: tuple[Any, ...]
    fields: dict[str, Any]
    """The thread's `system` and `tools`, as the request that created it sent them."""

    def transcript(self) -> list[Any]:
        chain: list[tuple[Any, ...]] = []
        turn: ThreadTurn | None = self
        while turn is not None:
            chain.append(turn.messages)
            turn = turn.parent
        return [message for messages in reversed(chain) for message in messages]


class MessageThreads:
    """The threads of one file, by the id of each reply they can be continued from."""

    def __init__(self) -> None:
        self._turns: dict[str, ThreadTurn] = {}

    def follow(self, call: RecordedCall, extra: dict[str, Any]) -> RecordedCall:
        """The call as the model saw it: a thread it continues put back in front of its
        messages (and the thread's fields in its body). Remembers the call's turn for
        the requests that continue it. A call with no `thread` comes back unchanged."""
        thread = call.body.get("thread")
        if not isinstance(thread, dict):
            return call
        parent = self._parent(thread, extra)
        own: Sequence[Any] = call.messages
        if parent is None:
            seen = call
        else:
            inherited = parent.transcript()
            extra["inherited_messages"] = len(inherited)
            body = {**{k: v for k, v in parent.fields.items() if k not in call.body}, **call.body}
            seen = replace(call, body=body, messages=[*inherited, *own])
        self._remember(seen, parent, own)
        return seen

    def _parent(self, thread: dict[str, Any], extra: dict[str, Any]) -> ThreadTurn | None:
        previous = thread.get("previous_message_id") if thread.get("type") == "continue" else None
        if not isinstance(previous, str) or not previous:
            return None
        extra["previous_message_id"] = previous
        turn = self._turns.get(previous)
        if turn is None:
            extra["previous_message_missing"] = True
        return turn

    def _remember(self, call: RecordedCall, parent: ThreadTurn | None, own: Sequence[Any]) -> None:
        reply = call.reply_body
        reply_id = reply.get("id")
        if call.outcome.error or not isinstance(reply_id, str) or not reply_id:
            return
        answer = {"role": "assistant", "content": reply.get("content") or []}
        fields = (
            parent.fields
            if parent is not None
            else {k: call.body[k] for k in THREAD_FIELDS if k in call.body}
        )
        self._turns[reply_id] = ThreadTurn(parent, (*own, answer), fields)
