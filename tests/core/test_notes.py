"""Notes' Markdown (issue 27): rendered for pages and the HTML export with no way to run
script or load anything, kept inert in the Markdown export, refused when too long."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt

from traces.core.outputs.export_md import render_markdown
from traces.core.outputs.notes import (
    MAX_NOTE_CHARS,
    Note,
    NoteRefused,
    clean_note_text,
    note_html,
    note_markdown_block,
)
from traces.core.outputs.postmortem import build_postmortem

HOSTILE_NOTES = [
    "<script>window.pwned=1</script>",
    '<img src=x onerror="window.pwned=2">',
    '<a href="https://ok.example" onclick="window.pwned=3">x</a>',
    "[click](javascript:window.pwned=4)",
    "[click](JaVaScRiPt:window.pwned=5)",
    "[click](&#x6A;avascript:window.pwned=6)",
    "[click](java\nscript:alert(1))",
    "![pixel](data:image/png;base64,iVBORw0KGgo=)",
    "![remote](https://tracker.example/p.gif)",
    "[d](data:text/html;base64,PHNjcmlwdD4=)",
    "[v](vbscript:msgbox)",
    '<https://ok.example/?q="onmouseover=alert(1)>',
    "&lt;script&gt;alert(1)&lt;/script&gt; &#60;img src=x onerror=alert(1)&#62;",
    "<details open ontoggle=alert(1)>",
    "```\n</code></pre><script>alert(1)</script>\n```",
    "<!-- --><svg onload=alert(1)>",
    "[x]: javascript:alert(1)\n\n[ref][x]",
]
ALLOWED_TAGS = {"p", "a", "strong", "em", "code", "pre", "ul", "ol", "li", "blockquote", "hr"}
ALLOWED_TAGS |= {"h1", "h2", "h3", "h4", "h5", "h6", "br"}


class Elements(HTMLParser):
    """Every start tag and its attributes, as a browser's tokenizer sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, attrs))


def elements(html: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    parser = Elements()
    parser.feed(html)
    parser.close()
    return parser.found


def assert_inert(html: str) -> None:
    """Only text markup and links to http(s)/mailto: no script, handler, image, frame."""
    for tag, attrs in elements(html):
        assert tag in ALLOWED_TAGS, (tag, html)
        for name, value in attrs:
            assert not name.startswith("on"), (name, html)
            if name == "href":
                assert (value or "").lower().startswith(("http:", "https:", "mailto:")), html
            assert name in {"href", "title", "rel", "class"}, (name, html)


@pytest.mark.parametrize("text", HOSTILE_NOTES)
def test_hostile_markdown_renders_inert(text):
    html = note_html(text)
    assert_inert(html)
    assert "<script" not in html and "<img" not in html


def test_markdown_still_renders_what_a_note_needs():
    html = note_html("**Root cause**: `Read` sent [the log](https://ex.example/a) twice\n\n- a")
    assert "<strong>Root cause</strong>" in html and "<code>Read</code>" in html
    assert '<a href="https://ex.example/a" rel="nofollow noopener noreferrer">' in html
    assert "<li>a</li>" in html


def test_a_note_past_the_limit_is_refused_with_the_limit_named():
    with pytest.raises(NoteRefused, match="at most 10,000 characters; this one has 10,001"):
        clean_note_text("x" * (MAX_NOTE_CHARS + 1), root_cause=False)
    with pytest.raises(NoteRefused, match="Write a note"):
        clean_note_text("  \n ", root_cause=False)
    assert clean_note_text(" ", root_cause=True) == ""
    assert clean_note_text("a\r\nb\x00", root_cause=False) == "a\nb"


def test_a_huge_input_renders_in_bounded_time():
    # Deeply nested brackets and emphasis: a pathological input for Markdown parsers.
    html = note_html("[" * 5000 + "*a" * 2500)
    assert_inert(html)


@pytest.mark.parametrize("text", [*HOSTILE_NOTES, "````\n```\nbreak out\n```"])
def test_markdown_export_keeps_notes_inert_in_a_viewer_that_renders_html(text):
    """A Markdown viewer that allows raw HTML (the worst case) shows the note as code."""
    notes = [Note(id=1, text=text, call=2, root_cause=True, author="<b>eve</b>`x`")]
    report = {"calls": [], "findings": [], "totals": {}, "outcome": {"text": "ok"}}
    markdown = render_markdown(build_postmortem(report, "run", notes))
    assert "## Notes" in markdown and "**Root cause** on `call 2`" in markdown
    viewer = MarkdownIt("commonmark", {"html": True})
    rendered = viewer.render(markdown)
    for tag, attrs in elements(rendered):
        assert tag not in {"script", "img", "svg", "details", "a"}, (tag, rendered)
        assert not any(name.startswith("on") for name, _ in attrs), rendered
    assert "<b>eve" not in rendered


def test_the_fence_outruns_any_backtick_run():
    block = note_markdown_block("a\n`````\nb")
    assert block.startswith("``````markdown\n") and block.endswith("\n``````")
