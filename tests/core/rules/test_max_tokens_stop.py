"""max-tokens-stop: responses cut by the output token limit."""

from __future__ import annotations

from tests.core.builders import log, pair, response, tool_use, user
from tests.core.rules.lint import lint, text

RULE = "max-tokens-stop"


def test_cut_inside_a_tool_use_names_the_call():
    resp = response([text("Writing it."), tool_use("t1", path="big")], "max_tokens", output=8192)
    assert lint(log(pair([user("write it")], resp)), RULE) == [
        (
            RULE,
            "warning",
            1,
            "t1",
            "call 1 stopped at the output token limit after 8,192 output tokens, inside a"
            " tool_use: the arguments of read_file are cut; raise max_tokens or ask for less",
        )
    ]


def test_cut_text_answer():
    resp = response([text("The answer is")], "max_tokens", output=1)
    assert lint(log(pair([user("hi")], resp)), RULE) == [
        (
            RULE,
            "warning",
            1,
            None,
            "call 1 stopped at the output token limit after 1 output token; raise max_tokens"
            " or ask for less",
        )
    ]


def test_other_stop_reasons_pass():
    resp = response([tool_use("t1", path="a")], "tool_use")
    assert lint(log(pair([user("hi")], resp)), RULE) == []
