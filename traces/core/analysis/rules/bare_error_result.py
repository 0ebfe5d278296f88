"""Rule bare-error-result."""

from __future__ import annotations

import re
from collections.abc import Iterator

from traces.core.patterns import lazy_compile

from ._common import name_of, quote, sent_results
from .base import Finding, LintContext, Rule
from .registry import register

ERROR_START = lazy_compile(r"^\W*(?:error|failed|failure|exception)\b", re.IGNORECASE)
"""Result text that announces a failure even without `is_error`."""
WORDS = lazy_compile(r"[a-z0-9_]+", re.IGNORECASE)
TAGS = lazy_compile(r"</?[a-z_][\w-]*>", re.IGNORECASE)
"""Wrapper tags like Claude Code's `<tool_use_error>`, which carry no meaning."""
GENERIC_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "error",
        "errors",
        "err",
        "failed",
        "failure",
        "fail",
        "fails",
        "exception",
        "none",
        "null",
        "nil",
        "false",
        "undefined",
        "unknown",
        "occurred",
        "has",
        "have",
        "had",
        "was",
        "is",
        "an",
        "some",
        "something",
        "went",
        "wrong",
        "oops",
        "sorry",
        "tool",
        "call",
        "execution",
        "internal",
        "unexpected",
        "please",
        "try",
        "again",
    ]
)
"""Words that say something failed without saying what or why."""


@register
class BareErrorResult(Rule):
    """An error result that tells the model nothing it can act on.

    What it finds
    A failed tool result (`is_error`, or text starting with error/failed/exception) that
    is empty or has fewer than `min_words` meaningful words (default 3) once generic
    words ("error", "failed", "exception", "unknown", "occurred", "None", "null",
    "false"…), wrapper tags, case and punctuation are set aside: "error", "Error:
    failed", "Exception", "null".

    Why it matters
    The error string is a prompt. "error: calendar service timed out after 5 s" tells the
    model it can retry; "error: attendee not found" tells it not to; "error" alone
    produces a retry loop until the turn cap fires.

    Example
    `check_availability("tom", slot_3)` returns `Error: failed`; the model calls it again,
    and again.

    How to fix
    Return what failed, why, and what to do next, for a reader who cannot ask:
    "error: calendar service timed out after 5 s; retry or skip Tom".
    """

    id = "bare-error-result"
    severity = "warning"
    message = (
        "error result of {name} ({tool_call_id}) is {what}; say what failed, why and what"
        " to try next"
    )
    defaults = {"min_words": 3}

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        minimum = int(self.options["min_words"])
        for sent in sent_results(ctx):
            text = sent.block.text
            if not (sent.block.is_error or ERROR_START.match(text)):
                continue
            meaningful = meaningful_words(text)
            if len(meaningful) >= minimum:
                continue
            what = "empty" if not text.strip() else f"just {quote(text)}"
            yield self.finding(sent.call, sent.block.tool_id, name=name_of(sent.run), what=what)


def meaningful_words(text: str) -> list[str]:
    """Words of the text that carry information (not generic failure vocabulary)."""
    words = WORDS.findall(TAGS.sub(" ", text).lower())
    return [word for word in words if word not in GENERIC_WORDS]
