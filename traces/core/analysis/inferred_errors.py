"""Tool results that report a failure without an error flag: the failure and its reason.

OpenAI Chat and Responses results have no error flag at all, agent SDKs write their
failures as text ("An error occurred while running the tool…"), and shells report a
non-zero exit code inside the output. Such a result is an *inferred* error: shown as one,
with the reason, but kept apart from results the format flagged (`is_error`), because a
guess from text is not the format's word.
"""

from __future__ import annotations

import re

import orjson

from traces.core.patterns import lazy_compile

LOOK_AT_CHARS = 2000
"""Failures announce themselves at the top (or in a small JSON envelope)."""

_EXIT_LINE = lazy_compile(r"^Process exited with code (-?\d+)\s*$", re.MULTILINE)
_EXIT_FIELD = lazy_compile(r'"exit_?code"\s*:\s*(-?\d+)', re.IGNORECASE)
_EXIT_TEXT = lazy_compile(r"^\W*exit(?:ed with)? code:?\s*(-?\d+)\b", re.IGNORECASE | re.MULTILINE)
_SDK_FAILURE = lazy_compile(r"an error occurred while running the tool", re.IGNORECASE)
_ERROR_START = lazy_compile(
    r"^\W*(?:(failed)\b|(error|exception|failure|fatal)\s*(?:[:!\-\u2014]|$))", re.IGNORECASE
)
"""A failure announced first: "Error: …", "FAILED tests/…", "failed to parse …", "Exception",
but not "error handling was added" or "Exceptions are logged"."""
_EXCEPTION_NAME = lazy_compile(r"^\W*([A-Z]\w*(?:Error|Exception)):")
"""A language's exception line: "ValueError: …", "FileNotFoundError: …"."""
_TRACEBACK = lazy_compile(r"^Traceback \(most recent call last\):", re.MULTILINE)


def inferred_error(text: str) -> str | None:
    """Why this result text reads as a failure, or None when it does not.

    The reasons, in order: a shell's non-zero exit code (`Process exited with code 2`,
    `"exit_code": -1` in a JSON envelope, `Exit code: 1`), an agent SDK's failure
    message, a Python traceback, text that announces a failure first ("Error: …",
    "failed to …", "ValueError: …").
    """
    head = text[:LOOK_AT_CHARS]
    if not head.strip():
        return None
    # Each search below runs only when a word it cannot match without is there: a plain
    # substring test is far cheaper than a search trying a pattern at every position.
    # ("occurred" and "code" have no letter that matches a non-ASCII one ignoring case,
    # unlike "i" and "s", so the lowered text tells.)
    lowered = head.lower()
    code = _exit_code(head, lowered)
    if code is not None:
        return f"exit code {code} in the output" if code != 0 else None
    if "occurred" in lowered and _SDK_FAILURE.search(head):
        return 'the text says "An error occurred while running the tool"'
    if "Traceback (most recent call last):" in head and _TRACEBACK.search(head):
        return "the text holds a Python traceback"
    start = _ERROR_START.match(head)
    if start:
        return f'the text starts with "{start.group(1) or start.group(2)}"'
    exception = _EXCEPTION_NAME.match(head)
    if exception:
        return f"the text starts with the exception {exception.group(1)}"
    return None


def _exit_code(head: str, lowered: str) -> int | None:
    """The exit code a shell wrote into the result, when there is one."""
    for pattern, needed in (
        (_EXIT_LINE, "Process exited with code" in head),
        (_EXIT_TEXT, "code" in lowered),
    ):
        match = pattern.search(head) if needed else None
        if match:
            return int(match.group(1))
    if head.lstrip()[:1] != "{":
        return None
    code = _json_exit_code(head)
    if code is not None:
        return code
    match = _EXIT_FIELD.search(head)  # a JSON envelope cut at LOOK_AT_CHARS
    return int(match.group(1)) if match else None


def _json_exit_code(head: str) -> int | None:
    """`{"output": …, "metadata": {"exit_code": N}}` (Codex shell) or `{"exit_code": N}`."""
    try:
        value = orjson.loads(head)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    for holder in (value, value.get("metadata")):
        if isinstance(holder, dict):
            code = holder.get("exit_code", holder.get("exitCode"))
            if isinstance(code, int) and not isinstance(code, bool):
                return code
    return None
