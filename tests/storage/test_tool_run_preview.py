"""A tool run's row keeps the head of its result that its readers use (issue 25: the
rest was a second copy): the inferred error, the pages' previews and the report are the
same as when the whole result was kept."""

from __future__ import annotations

import orjson
import pytest
from django.test import Client

from traces.core.analysis.inferred_errors import LOOK_AT_CHARS, inferred_error
from traces.services.upload import trace_upload
from traces.storage.rows import PREVIEW_KEPT_CHARS

LONG_OK = "line of a long listing\n" * 300  # some 6,900 characters, no failure in it
FAILED_LATE = "x" * (LOOK_AT_CHARS - 40) + "\nTraceback (most recent call last):\n" + "y" * 3000
FAILED_FIRST = "Error: the build failed\n" + "z" * 5000


def transcript() -> bytes:
    messages: list[dict] = [{"role": "user", "content": "List, build, test."}]
    for n, result in enumerate([LONG_OK, FAILED_LATE, FAILED_FIRST]):
        call_id = f"call_{n}"
        messages.append(
            {
                "role": "assistant",
                "content": f"Step {n}",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "shell", "arguments": "{}"},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
    messages.append({"role": "assistant", "content": "Done."})
    return orjson.dumps({"messages": messages}) + b"\n"


@pytest.mark.django_db
def test_long_results_keep_their_facts_with_a_shorter_row():
    result = trace_upload(files=[("long.json", transcript())], name="long results")
    trace, core = result.trace, result.core
    rows = list(trace.tool_runs.order_by("position"))
    assert len(rows) == len(core.tool_runs) == 3
    for row, run in zip(rows, core.tool_runs, strict=True):
        assert len(run.result_text) > PREVIEW_KEPT_CHARS  # the core still has more
        assert row.result_preview == run.result_text[:PREVIEW_KEPT_CHARS]
        # What reads the row: the inferred error, as the core found it on the whole text.
        assert (row.is_error, row.error_inferred) == (run.is_error, run.error_inferred)
    assert rows[0].error_inferred is None
    # A traceback just inside the head the rule reads is still seen from the row.
    assert rows[1].error_inferred == inferred_error(FAILED_LATE) is not None
    # The report's runs come from the core, not the rows: their previews are unchanged.
    previews = [r["result_preview"] for r in trace.report["tool_runs"]]
    assert previews == [run.result_text[:300] for run in core.tool_runs]

    page = Client(HTTP_HOST="127.0.0.1").get(f"/traces/{trace.pk}/")
    assert page.status_code == 200
    assert b"inferred error" in page.content
