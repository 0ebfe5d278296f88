"""Bad input: every malformed line becomes a LineError with its number; the rest is read."""

from __future__ import annotations

import gzip

import orjson
import pytest

from tests.core.builders import log, pair, response, user
from traces.core.analysis.ingest import analyze_bytes
from traces.core.reading.limits import InputRejected, Limits
from traces.core.reading.sources import read_source

GOOD = pair([user("hi")], response([{"type": "text", "text": "hello"}], "end_turn"))


def errors_of(data: bytes, **limits) -> dict[int, str]:
    trace = analyze_bytes(data, limits=Limits(**limits)) if limits else analyze_bytes(data)
    return {e.line: e.message for e in trace.line_errors}


def test_malformed_lines_are_reported_with_numbers_and_the_rest_ingested():
    data = b"\n".join(
        [
            GOOD,
            GOOD[: len(GOOD) // 2],  # cut mid-record
            b"this is not json",
            b'{"a": "nul\x00byte"}',
            b"[1, 2, 3]",  # JSON, wrong shape
            b"",  # blank lines are not errors
            GOOD,
        ]
    )  # and no final newline
    trace = analyze_bytes(data)
    assert len(trace.calls) == 2
    assert [c.line for c in trace.calls] == [1, 7]
    errors = {e.line: e.message for e in trace.line_errors}
    assert set(errors) == {2, 3, 4, 5}
    assert "cut off mid-record" in errors[2]
    assert "not valid JSON" in errors[3]
    assert "NUL" in errors[4]
    assert "request and response" in errors[5]
    assert trace.lines_total == 7


def test_bom_and_crlf_are_tolerated():
    data = b"\xef\xbb\xbf" + GOOD + b"\r\n" + GOOD + b"\r\n"
    trace = analyze_bytes(data)
    assert len(trace.calls) == 2 and not trace.line_errors


def test_nesting_bomb_is_refused_on_its_line_only():
    bomb = b'{"request": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    trace = analyze_bytes(log(GOOD, bomb, GOOD))
    assert len(trace.calls) == 2
    assert "nested deeper" in {e.line: e.message for e in trace.line_errors}[2]


def test_depth_limit_is_configurable():
    deep = b'{"request": {"x": ' + b"[" * 50 + b"]" * 50 + b'}, "response": null}'
    assert "nested deeper than 20" in errors_of(log(GOOD, deep), max_depth=20)[2]


def test_gzip_is_read_and_bombs_are_refused():
    trace = analyze_bytes(gzip.compress(log(GOOD, GOOD)))
    assert len(trace.calls) == 2
    bomb = gzip.compress(b" " * (5 * 1024 * 1024))
    with pytest.raises(InputRejected, match="decompresses to more than"):
        read_source(bomb, limits=Limits(max_decompressed_bytes=1024 * 1024))


def test_file_size_limit_gives_a_clear_message():
    with pytest.raises(InputRejected, match="limit is 10"):
        read_source(b"x" * 11, limits=Limits(max_file_bytes=10))


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "empty"),
        (b"hello world\nthis is prose\n", "No readable record"),
        (orjson.dumps({"some": "object"}), "No supported trace format"),
    ],
)
def test_not_a_trace_gets_one_clear_message(data, message):
    with pytest.raises(InputRejected, match=message):
        analyze_bytes(data)


def test_yaml_aliases_are_refused():
    data = b"interactions:\n- &a {request: {}, response: {}}\n- *a\n"
    with pytest.raises(InputRejected, match="aliases"):
        read_source(data, "x.yaml")


def test_pretty_printed_json_document_is_one_record():
    body = orjson.dumps(
        {
            "status": 200,
            "headers": {},
            "body": orjson.dumps(response([{"type": "text", "text": "x"}], "end_turn")).decode(),
        },
        option=orjson.OPT_INDENT_2,
    )
    source = read_source(body, "recording.json")
    assert source.layout == "json" and len(source.items) == 1
    assert len(analyze_bytes(body).calls) == 1


def test_the_zip_reader_does_not_reach_back_into_the_record_reader():
    """`sources` reads an `.eval` archive through `containers`; were `containers` to import
    `records` (or `sources`) again the two would form an import cycle hidden behind a late import."""
    import ast
    from pathlib import Path

    import traces.core.reading.containers as containers

    tree = ast.parse(Path(containers.__file__).read_text(encoding="utf-8"))
    imported = {
        node.module or ""
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level > 0
    }
    assert "records" not in imported and "sources" not in imported
    assert imported <= {"limits", "model"}


def test_two_records_on_one_line_are_both_read_with_that_line_number():
    """pi once wrote two session records with no newline between them (SOURCES.md 19)."""
    trace = analyze_bytes(log(GOOD, GOOD + GOOD, GOOD))
    assert not trace.line_errors
    assert [c.line for c in trace.calls] == [1, 2, 2, 3]


def test_values_joined_by_spaces_on_one_line_are_split_too():
    source = read_source(b'{"a": 1} {"b": [2]}\t\r\n{"c": 3}', limits=Limits())
    assert [(r.line, r.value) for r in source.items] == [
        (1, {"a": 1}),
        (1, {"b": [2]}),
        (2, {"c": 3}),
    ]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"a": 1}x', "not valid JSON"),  # trailing junk, not a second value
        (b'{"a": 1}{"b": ', "not valid JSON"),  # the second value is cut off
        (b'{"a": 1}2', "not valid JSON"),  # a scalar after an object is not a record
        (b'{"a": 1}{"b": NaN}', "not valid JSON"),  # each piece must be JSON orjson reads
        (b'{"a": 1}' + b"[" * 3000 + b"]" * 3000, "not valid JSON"),  # too deep to split
    ],
)
def test_a_line_that_is_not_whole_values_stays_one_error(line: bytes, reason: str):
    source = read_source(line + b"\n" + b'{"ok": true}\n', limits=Limits())
    items = list(source.items)
    assert [type(i).__name__ for i in items] == ["LineError", "Record"]
    assert items[0].line == 1 and reason in items[0].message
    assert items[1].value == {"ok": True}
