"""bare-error-result: error results that say nothing the model can act on."""

from __future__ import annotations

import pytest

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from tests.core.rules.lint import echo, lint, results, text

RULE = "bare-error-result"


def _result(content: str, is_error: bool, **options: int) -> list[tuple]:
    q = [user("check tom")]
    r1 = response([tool_use("t1", path="tom")], "tool_use")
    h2 = [*q, echo(r1), results(tool_result("t1", content, is_error))]
    return lint(log(pair(q, r1), pair(h2, response([text("ok")], "end_turn"))), RULE, **options)


def _finding(what: str) -> list[tuple]:
    return [
        (
            RULE,
            "warning",
            2,
            "t1",
            f"error result of read_file (t1) is {what}; say what failed, why and what to try next",
        )
    ]


@pytest.mark.parametrize("content", ["Error: failed", "error", "Exception!", "None", "null"])
def test_bare_error_flagged_with_is_error(content):
    assert _result(content, is_error=True) == _finding(f"just '{content}'")


def test_error_text_without_the_flag_counts_too():
    assert _result("ERROR: an unknown error occurred.", is_error=False) == _finding(
        "just 'ERROR: an unknown error occurred.'"
    )


def test_empty_error_result():
    assert _result("", is_error=True) == _finding("empty")


@pytest.mark.parametrize(
    ("content", "is_error"),
    [
        ("error: calendar service timed out after 5 s", True),
        ("error: attendee not found", True),
        ("<tool_use_error>File does not exist.</tool_use_error>", True),
        ("ok", False),  # short, but not an error
        ("", False),
    ],
)
def test_actionable_or_non_error_results_pass(content, is_error):
    assert _result(content, is_error) == []


def test_threshold_is_an_option():
    # "attendee not found" has three meaningful words: enough by default, not for 4.
    assert _result("error: attendee not found", is_error=True, min_words=4) == _finding(
        "just 'error: attendee not found'"
    )
