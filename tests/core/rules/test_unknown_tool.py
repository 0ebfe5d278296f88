"""unknown-tool: calls to names the request did not offer."""

from __future__ import annotations

import orjson

from tests.core.builders import log, pair, response, tool_use, user
from tests.core.rules.lint import lint

RULE = "unknown-tool"


def test_name_not_in_the_tool_list():
    resp = response([tool_use("t1", name="read_files", path="a")], "tool_use")
    assert lint(log(pair([user("read a")], resp)), RULE) == [
        (
            RULE,
            "error",
            1,
            "t1",
            "call 1 asks for tool 'read_files' (t1), which the request did not offer"
            " (offered: read_file); answer with an error result naming the valid tools",
        )
    ]


def test_offered_name_is_fine():
    resp = response([tool_use("t1", path="a")], "tool_use")
    assert lint(log(pair([user("read a")], resp)), RULE) == []


def test_response_only_recordings_are_skipped():
    # No request recorded, so no tool list to compare with.
    resp = response([tool_use("t1", name="read_files", path="a")], "tool_use")
    assert lint(log(orjson.dumps(resp)), RULE) == []
