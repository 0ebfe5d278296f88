"""People's notes on a trace (a call or a tool run marked as the root cause, or a remark), and
the two safe ways to show their Markdown: as HTML for pages and the HTML export, and as an
inert block for the Markdown export (which agents read through the MCP server).

A note's text is untrusted like trace text: anyone with a member's token writes it and
viewers, share-link visitors and agents read it. So the HTML comes from markdown-it-py
(CommonMark) with raw HTML off (a `<script>` or `<img onerror>` stays text), images off
(no data: URL, no tracking pixel, nothing loaded from a network), and links only to http,
https and mailto (`javascript:`, `data:` and `vbscript:` stay text); every link opens with
`rel="nofollow noopener noreferrer"`. The Markdown export keeps the text as written inside
a fenced block longer than any backtick run in it, so no viewer turns it into markup.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any

from traces.core.records import dataclass

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

MAX_NOTE_CHARS = 10_000
"""A note is a remark for a post-mortem, not a document: longer text is refused with a
message saying so (checked before any parsing)."""

SAFE_SCHEMES = ("http:", "https:", "mailto:")
_BACKTICKS = re.compile(r"`+")


class NoteRefused(ValueError):
    """A note that cannot be kept, with the reason to show on the form."""


@dataclass(frozen=True)
class Note:
    """One note as the outputs show it: what it is on, whether it is the root cause, who
    wrote it (empty in local mode) and when (ISO 8601, UTC)."""

    id: int
    text: str
    call: int | None = None
    tool_run: str | None = None
    """The tool call id of the tool run the note is on (None: on the call or the trace)."""
    root_cause: bool = False
    author: str = ""
    created_at: str = ""
    updated_at: str = ""

    @property
    def target(self) -> str:
        """What the note is on, in words (`tool run toolu_1 (call 3)`, `call 3`, `trace`)."""
        if self.tool_run is not None:
            where = f" (call {self.call})" if self.call is not None else ""
            return f"tool run {self.tool_run}{where}"
        return f"call {self.call}" if self.call is not None else "trace"


def clean_note_text(text: str, *, root_cause: bool) -> str:
    """The text to store, or `NoteRefused`: too long (the limit named), or empty without
    a root-cause mark (an empty remark says nothing)."""
    if len(text) > MAX_NOTE_CHARS:
        raise NoteRefused(
            f"A note holds at most {MAX_NOTE_CHARS:,} characters; this one has {len(text):,}."
        )
    cleaned = text.replace("\r\n", "\n").replace("\x00", "").strip()
    if not cleaned and not root_cause:
        raise NoteRefused("Write a note, or mark this as the root cause.")
    return cleaned


def _safe_link(url: str) -> bool:
    """Only web and mail links; anything else (javascript:, data:, relative) is not a link."""
    return url.strip().lower().startswith(SAFE_SCHEMES)


def _link_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    tokens[idx].attrSet("rel", "nofollow noopener noreferrer")
    return str(self.renderToken(tokens, idx, options, env))


@cache
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    parser.disable(["image", "html_inline", "html_block"])
    parser.validateLink = _safe_link  # type: ignore[method-assign]
    parser.add_render_rule("link_open", _link_open)
    return parser


def note_html(text: str) -> str:
    """The note's Markdown as HTML that can only be text, emphasis, lists, code and safe links."""
    return str(_markdown().render(text[:MAX_NOTE_CHARS]))


def note_markdown_block(text: str) -> str:
    """The note's text, unchanged, in a fence no line of it can close (the Markdown export)."""
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}markdown\n{text}\n{fence}"


def notes_for_call(notes: list[Note] | tuple[Note, ...], call: int) -> list[Note]:
    return [note for note in notes if note.call == call]


def root_causes(notes: list[Note] | tuple[Note, ...]) -> list[Note]:
    return [note for note in notes if note.root_cause]
