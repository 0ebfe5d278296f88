"""Content search's database-free half: query words, a call's indexed text, snippets."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.content_search import (
    ENTRY_CHARS,
    MAX_TERMS,
    PIECE_CHARS,
    call_text,
    joined,
    search_terms,
    snippet,
)


def test_query_words_are_letters_and_digits_only():
    assert search_terms("' OR 1=1; -- DROP") == ("or", "1", "drop")
    assert search_terms('"read_file" NEAR(x*) body:grep') == (
        "read",
        "file",
        "near",
        "x",
        "body",
        "grep",
    )
    assert search_terms("a\x00b") == ("a", "b")
    assert search_terms("Café CAFÉ café") == ("café",)
    assert search_terms("<>&;%_") == ()
    assert len(search_terms(" ".join(f"w{n}" for n in range(50)))) == MAX_TERMS
    assert search_terms("x" * 500) == ("x" * 64,)


def test_a_calls_text_holds_messages_tool_arguments_and_results():
    data = log(
        pair(
            [user("look for apricots")],
            response([tool_use("t1", name="grep", q="plum")], "tool_use"),
        ),
        pair(
            [
                user("look for apricots"),
                {"role": "assistant", "content": [tool_use("t1", name="grep", q="plum")]},
                {"role": "user", "content": [tool_result("t1", "cherry\x00 found")]},
            ],
            response([{"type": "text", "text": "Found a cherry."}], "end_turn"),
        ),
    )
    calls = analyze_bytes(data, filename="t.jsonl").calls
    first, second = (call_text(call) for call in calls)
    assert first.splitlines() == ["look for apricots", "grep", '{"q": "plum"}']
    assert "cherry  found" in second and "Found a cherry." in second
    assert "\x00" not in second


def test_pieces_and_entries_are_capped():
    text = joined(["a" * (PIECE_CHARS + 10), "b" * 3])
    assert text == "a" * PIECE_CHARS + "\nbbb"
    many = joined(["c" * PIECE_CHARS] * 10)
    assert len(many) <= ENTRY_CHARS
    assert joined(["", "  ", "\x00"]) == ""
    assert joined(["lone \ud800 surrogate"]) == "lone \ufffd surrogate"


def test_snippet_marks_whole_words_around_the_first_match():
    text = "x" * 50 + " alpha beta " + "filler " * 60 + "Beta again, betamax not"
    shown = snippet(text, ("beta",), width=80)
    assert shown.cut_before and shown.cut_after
    assert [piece for piece, marked in shown.parts() if marked] == ["beta"]
    assert "".join(piece for piece, _ in shown.parts()) == shown.text
    later = snippet("Beta again, betamax not", ("beta",))
    assert [piece for piece, marked in later.parts() if marked] == ["Beta"]  # not "betamax"
    assert not later.cut_before and not later.cut_after


def test_snippet_squeezes_whitespace_and_never_splits_a_word():
    shown = snippet("line one\n\n\tline two  target   end", ("target",), width=18)
    assert "\n" not in shown.text and "  " not in shown.text
    assert "target" in shown.text
    for piece in shown.text.split():
        assert piece in {"line", "one", "two", "target", "end"}


def test_no_match_shows_the_start():
    shown = snippet("nothing here at all", ("absent",))
    assert shown.text == "nothing here at all" and shown.marks == ()


@given(st.text(max_size=400), st.text(max_size=40))
def test_marks_are_in_order_inside_the_text_and_match_a_term(text, query):
    terms = search_terms(query)
    shown = snippet(text, terms, width=60)
    at = 0
    for start, end in shown.marks:
        assert at <= start < end <= len(shown.text)
        assert shown.text[start:end].lower() in terms
        at = end
