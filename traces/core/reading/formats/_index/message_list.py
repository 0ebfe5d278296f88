"""The claim `message_list` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/message_list.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "message-list"
"""The name of the adapter whose `sniff` this is."""

MESSAGE_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


REQUEST_BODY_KEYS = frozenset(
    {"model", "stream", "max_tokens", "max_completion_tokens", "temperature", "tool_choice"}
)
"""Keys of an API request body: a line holding them may be a request log, not a transcript."""


PAIR_KEYS = frozenset({"request", "response", "choices", "object", "output"})
"""Keys that mark request/response logs, which other adapters read."""


SNIFF_MESSAGES = 5


SINGLE_MESSAGE_SHARE = 0.6
"""Share of sniffed records that must be single messages to claim a one-per-record file."""


# -- recognising shapes --------------------------------------------------------------------
def _is_message(value: Any) -> bool:
    """A chat message, not an API response object (`type: "message"`, Anthropic's)."""
    if not isinstance(value, dict) or PAIR_KEYS.intersection(value):
        return False
    if value.get("type") == "message":
        return False
    if value.get("role") not in MESSAGE_ROLES:
        return False
    return "content" in value or "tool_calls" in value or "function_call" in value


def _is_message_list(value: Any) -> bool:
    """A non-empty list whose first few items are all chat messages."""
    if not isinstance(value, list) or not value:
        return False
    return all(_is_message(item) for item in value[:SNIFF_MESSAGES])


def _recognise(value: Any) -> tuple[float, str] | None:
    """(score, reason) when one record is a whole transcript; scores stay below the 0.9
    of request-log adapters, so a request log is never taken for a transcript."""
    if _is_message_list(value):
        return 0.6, "records are lists of chat messages (a message-list transcript)"
    if not isinstance(value, dict) or PAIR_KEYS.intersection(value):
        return None
    if _is_message_list(value.get("traj")):
        return 0.7, "records hold a 'traj' message list (tau-bench trajectory)"
    if _is_message_list(value.get("history")):
        return 0.7, "a 'history' message list (SWE-agent .traj trajectory)"
    if _is_message_list(value.get("messages")):
        if REQUEST_BODY_KEYS.intersection(value):
            return 0.4, "records hold 'messages' like an API request body, with no response"
        return 0.6, "records hold a 'messages' list (a message-list transcript)"
    return None


def sniff(values: Sequence[Any]) -> Detection | None:
    for value in values:
        if isinstance(value, (dict, list)):
            claim = _recognise(value)
            if claim is not None:
                return Detection(*claim)
            break
    records = [v for v in values if isinstance(v, (dict, list))]
    messages = sum(1 for v in records if _is_message(v))
    if records and _is_message(records[0]) and messages >= SINGLE_MESSAGE_SHARE * len(records):
        return Detection(0.5, "records are single chat messages (one transcript)")
    return None
