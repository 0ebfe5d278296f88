"""escape_html writes what html.escape writes, for any text."""

from __future__ import annotations

import html

from hypothesis import given
from hypothesis import strategies as st

from traces.core.outputs.escaping import escape_html

TEXTS = st.text(alphabet=st.sampled_from("a&<>\"' é\n;#x27"), max_size=30) | st.text()


@given(TEXTS)
def test_escape_html_is_html_escape(text):
    assert escape_html(text) == html.escape(text)
    assert escape_html(text, quote=False) == html.escape(text, quote=False)
