"""Input limits: what a file may be before it is refused with a clear message."""

from __future__ import annotations

from traces.core.records import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds that keep hostile or broken input from exhausting the server.

    Every limit produces a readable message (`InputRejected` or a `LineError`),
    never a crash or a hang.
    """

    max_file_bytes: int = 512 * 1024 * 1024
    max_decompressed_bytes: int = 2 * 1024 * 1024 * 1024
    max_line_bytes: int = 256 * 1024 * 1024
    max_depth: int = 254
    """Deepest nesting accepted; 254 is also the most orjson can serialise again."""
    max_records: int = 2_000_000
    max_document_values: int = 5_000_000
    """Most JSON values (numbers, strings, objects...) one document or line may hold: a
    parsed value costs 30-100 bytes of memory, so this bounds what a parse can take even
    when the text is tiny per value (`[0,0,0,...]` is 2 bytes a value)."""
    max_decompression_ratio: int = 200
    """Past the first `ratio_free_bytes` of output, gzip input inflating more than this
    many times is refused as a bomb at once (text traces compress 5-20 times)."""
    ratio_free_bytes: int = 1024 * 1024


DEFAULT_LIMITS = Limits()


class InputRejected(ValueError):
    """The whole input cannot be read as a trace; the message says why, for a person."""


class NotATrace(InputRejected):
    """The input was recognised, and holds no model call: an agent's index or metadata file
    beside its sessions (`sessions.json`, `session.json`, `logs.json`), or a session whose
    every request went unanswered. The message names what the file is and what to upload
    instead; nothing in it was unreadable."""
