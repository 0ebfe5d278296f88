"""stack-trace-result: raw tracebacks returned to the model."""

from __future__ import annotations

import pytest

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from tests.core.rules.lint import echo, lint, results, text

RULE = "stack-trace-result"

PYTHON = """Traceback (most recent call last):
  File "/srv/tools/orders.py", line 42, in get_order
    total = body["total"]
  File "/srv/tools/http.py", line 7, in fetch
    raise KeyError(key)
KeyError: 'total'
"""
JAVASCRIPT = """TypeError: Cannot read properties of undefined (reading 'total')
    at getOrder (/srv/tools/orders.js:42:17)
    at async handler (/srv/tools/index.js:10:5)
"""
JAVA = """java.lang.NullPointerException: order is null
\tat com.shop.orders.OrderTool.getOrder(OrderTool.java:42)
\tat com.shop.tools.Dispatcher.run(Dispatcher.java:10)
"""
GO = """panic: runtime error: index out of range [3] with length 3

goroutine 1 [running]:
main.getOrder(...)
\t/srv/tools/orders.go:42 +0x1d
main.main()
\t/srv/tools/main.go:10 +0x25
"""


def _result(content: str) -> list[tuple]:
    q = [user("get the order")]
    r1 = response([tool_use("t1", path="order")], "tool_use")
    h2 = [*q, echo(r1), results(tool_result("t1", content, True))]
    return lint(log(pair(q, r1), pair(h2, response([text("ok")], "end_turn"))), RULE)


def _finding(language: str, frames: int, ending: str = "") -> list[tuple]:
    return [
        (
            RULE,
            "warning",
            2,
            "t1",
            f"result of read_file (t1) is a raw {language} stack trace ({frames} frames{ending});"
            " return a short error saying what failed and what to try",
        )
    ]


def test_python_traceback_names_the_exception():
    assert _result(PYTHON) == _finding("Python", 2, ", ending 'KeyError: 'total''")


@pytest.mark.parametrize(
    ("content", "language"), [(JAVASCRIPT, "JavaScript"), (JAVA, "Java"), (GO, "Go")]
)
def test_other_languages(content, language):
    assert _result(content) == _finding(language, 2)


@pytest.mark.parametrize(
    "content",
    [
        "error: order SU-88421 has no total; it may be a draft",
        "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'total'",
        "TypeError: bad\n    at getOrder (/srv/tools/orders.js:42:17)\n",
        "We meet at noon (room 4:10:5)\n    at the station",
    ],
)
def test_short_or_plain_errors_pass(content):
    assert _result(content) == []
