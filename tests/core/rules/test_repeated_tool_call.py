"""repeated-tool-call: the same call with the same arguments, again and again."""

from __future__ import annotations

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from tests.core.rules.lint import echo, lint, results, text

RULE = "repeated-tool-call"


def _loop(*paths: str) -> list[tuple]:
    history = [user("read it")]
    lines = []
    for number, path in enumerate(paths, start=1):
        resp = response([tool_use(f"t{number}", path=path)], "tool_use")
        lines.append(pair(history, resp))
        history = [*history, echo(resp), results(tool_result(f"t{number}", "error", True))]
    lines.append(pair(history, response([text("giving up")], "end_turn")))
    return lint(log(*lines), RULE)


def test_third_identical_call_is_a_retry_loop():
    assert _loop("a", "a", "a", "a") == [
        (
            RULE,
            "warning",
            3,
            "t3",
            "call 3 asks read_file with the same arguments for the 3rd time (calls 1, 2, 3); a"
            " retry loop: make the result say what to do instead",
        )
    ]


def test_two_repeats_or_other_arguments_pass():
    assert _loop("a", "a", "b") == []
    assert _loop("a", "b", "c") == []
