"""The one shape of a request-log dialect: read a message, a reply, usage, an error, a stream.

Every vendor API that request logs record (Anthropic Messages, OpenAI Chat Completions and
Responses, Gemini, Bedrock Converse, and those still to come) is a module of this package
with these module-level functions, so `formats.request_log` reads any of them the same
way. A module is the implementation (`Dialect` is a protocol a module satisfies), which
keeps each vendor's mapping a page of plain functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

from ...model import Message, Usage

Assembled = tuple[Any, str | None]
"""A response body rebuilt from a stream (None when nothing could be), and why the call
failed or was cut short (None when the stream ended well)."""


class Reply(NamedTuple):
    """A response body read into the canonical shape."""

    message: Message
    stop_reason: str | None
    usage: Usage | None


@runtime_checkable
class Dialect(Protocol):
    """What the request-log reader asks of a vendor's API shapes."""

    def normalize_message(self, raw: Any) -> Message:
        """One message of a request's transcript as a canonical `Message`."""
        ...

    def read_response(self, body: dict[str, Any], messages: Sequence[Any]) -> Reply | None:
        """A successful response body as the reply to `messages` (None when it holds no
        reply). The transcript matters only where tool ids depend on the position (Gemini)."""
        ...

    def usage_from(self, raw: Any) -> Usage | None:
        """The vendor's usage object with `input_tokens` meaning uncached input."""
        ...

    def error_text(self, body: Any) -> str | None:
        """Why a body is an API error, or None when it is not one."""
        ...

    def assemble_stream(self, text: str) -> Assembled:
        """A recorded server-sent event stream rebuilt into one response body."""
        ...

    def assemble_pieces(self, body: list[Any]) -> Assembled | None:
        """A response logged as the list of its stream pieces (chunks, events) rebuilt into
        one body; None when the list is not such a stream."""
        ...
