"""Redaction takes credentials, never what readers need: every corpus file, redacted as a
shared server stores it, still reads with its independent counts (`test_corpus_counts`).

Session ids, token counts and tool arguments sit beside the headers redaction changes; a
rule that took `session_id` or `max_tokens` for a credential would show up here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.test_corpus_counts import EXPECTED, FIGURES, corpus_counts
from traces.core.analysis.ingest import analyze_files
from traces.core.outputs.report import build_report
from traces.core.reading.upload_redaction import redact_upload


@pytest.mark.corpus
@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_a_redacted_corpus_file_reads_with_the_same_counts(relative: str, corpus: Path):
    path = corpus / relative
    data = path.read_bytes()
    filename, redacted = redact_upload(path.name, data)
    if not data.startswith(b"PK"):  # text: only secret spans changed, lines stayed
        assert redacted.data.count(b"\n") == data.count(b"\n")
    trace = analyze_files([(filename, redacted.data)])
    actual = corpus_counts(build_report(trace))
    expected = {k: EXPECTED[relative][k] for k in FIGURES if EXPECTED[relative].get(k) is not None}
    assert {k: actual[k] for k in expected} == expected, redacted.fields
    assert redact_upload(filename, redacted.data)[1].fields == {}  # nothing left to find
