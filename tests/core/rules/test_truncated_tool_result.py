"""truncated-tool-result: results cut mid-record or at a round size, without a marker."""

from __future__ import annotations

import pytest

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from tests.core.rules.lint import echo, lint, results, text

RULE = "truncated-tool-result"
CUT_JSON = '[{"order_id": "SU-88421", "total": 118}, {"order_id": "SU-88'


def _result(content: str) -> list[tuple]:
    q = [user("find orders")]
    r1 = response([tool_use("t1", name="read_file", path="orders")], "tool_use")
    h2 = [*q, echo(r1), results(tool_result("t1", content))]
    return lint(log(pair(q, r1), pair(h2, response([text("ok")], "end_turn"))), RULE)


def _finding(how: str) -> list[tuple]:
    return [
        (
            RULE,
            "warning",
            2,
            "t1",
            f"result of read_file (t1) {how} and does not say so; cut at a record boundary and"
            " add 'showing N of M' with a way to get the rest",
        )
    ]


def test_json_cut_mid_object():
    assert _result(CUT_JSON) == _finding(
        f"is JSON that stops mid-record after {len(CUT_JSON)} characters"
    )


def test_json_cut_inside_a_string_of_a_jsonl_listing():
    listing = '{"id": 1}\n{"id": 2, "note": "a\\"b'
    assert _result(listing) == _finding(
        f"is JSON that stops mid-record after {len(listing)} characters"
    )


def test_text_cut_at_a_round_size():
    assert _result("line of log output\n" * 215 + "x" * 11) == _finding(
        "is exactly 4,096 characters long"
    )


def test_round_size_in_bytes():
    assert _result("é" * 512) == _finding("is exactly 1,024 bytes long")


@pytest.mark.parametrize(
    "content",
    [
        CUT_JSON + "\n[truncated: showing 2 of 340 orders; narrow with a date range]",
        '[{"order_id": "SU-88421"}], "next_cursor": "abc"',
        '[{"order_id": "SU-88421", "total": 118}]',
        "x" * 4095,
        "[INFO] started [worker 3]",
    ],
)
def test_honest_or_whole_results_pass(content):
    assert _result(content) == []
