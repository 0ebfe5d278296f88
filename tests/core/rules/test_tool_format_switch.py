"""tool-format-switch: one tool answering in JSON and in prose."""

from __future__ import annotations

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from tests.core.rules.lint import echo, lint, results, text

RULE = "tool-format-switch"


def _loop(*answers: tuple[str, bool]) -> list[tuple]:
    history = [user("look up orders")]
    lines = []
    for number, (answer, is_error) in enumerate(answers, start=1):
        resp = response([tool_use(f"t{number}", path=f"o{number}")], "tool_use")
        lines.append(pair(history, resp))
        history = [*history, echo(resp), results(tool_result(f"t{number}", answer, is_error))]
    lines.append(pair(history, response([text("done")], "end_turn")))
    return lint(log(*lines), RULE)


def test_json_then_prose():
    found = _loop(('{"orders": [1]}', False), ("[1, 2]", False), ("No orders found.", False))
    assert found == [
        (
            RULE,
            "info",
            4,
            "t3",
            "read_file answered 2 time(s) as JSON and 1 time(s) as prose; this result is prose:"
            " keep one format per tool",
        )
    ]


def test_one_format_or_too_few_results_pass():
    assert _loop(('{"orders": [1]}', False), ("[]", False), ('{"orders": []}', False)) == []
    assert _loop(('{"orders": [1]}', False), ("No orders found.", False)) == []
    # Error results are prose by nature and do not count.
    assert _loop(("[1]", False), ("[2]", False), ("error: store offline", True)) == []
