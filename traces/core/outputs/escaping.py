"""`escape_html`: `html.escape`'s output, without importing `html` (which loads the ~2,200
entities of `html.entities` that only `unescape` reads) and skipping the replacements a
text does not need (most texts of a report are names and numbers with nothing to escape).
"""

from __future__ import annotations


def escape_html(text: str, quote: bool = True) -> str:
    """`&`, `<` and `>` escaped, and with `quote` `"` and `'` too, as `html.escape` does."""
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    if quote:
        if '"' in text:
            text = text.replace('"', "&quot;")
        if "'" in text:
            text = text.replace("'", "&#x27;")
    return text
