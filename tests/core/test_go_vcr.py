"""Go `go-vcr` cassettes: status text and code, duration, and the Date header's time.

No go-vcr cassette is in the corpus, so the corpus's Chat Completions cassette (vcrpy) is
rewritten into go-vcr's shape (`pkg/cassette/cassette.go`, format version 2: `status:
"200 OK"`, `code: 200`, `duration: 812.5ms`, body as a string, headers as lists): the
same real traffic, in the other recorder's envelope, must read the same, plus the
status and the timing go-vcr adds.
"""

from __future__ import annotations

from email.utils import parsedate_to_datetime

import pytest
import yaml

from tests.conftest import CORPUS
from traces.core.analysis.ingest import analyze_bytes
from traces.core.analysis.whatif.basis import basis_from_report
from traces.core.analysis.whatif.prompt_cache import simulate
from traces.core.outputs.report import build_report
from traces.core.reading.go_vcr import duration_seconds, status_code, times

CASSETTE = (
    CORPUS / "openai_chat_completions_api" / "test_chat_completion_tool_calls_with_content.yaml"
)
DURATIONS = ("1.234567s", "812.5ms")


def _go_vcr(interactions: list[dict], durations=DURATIONS) -> bytes:
    """vcrpy interactions in go-vcr's shape."""
    out = []
    for number, (interaction, duration) in enumerate(zip(interactions, durations, strict=True)):
        request, response = interaction["request"], interaction["response"]
        code = response["status"]["code"]
        out.append(
            {
                "id": number,
                "request": {
                    "proto": "HTTP/1.1",
                    "proto_major": 1,
                    "proto_minor": 1,
                    "content_length": len(request["body"]),
                    "host": "api.openai.com",
                    "body": request["body"],
                    "headers": {k: v for k, v in request["headers"].items()},
                    "url": request["uri"],
                    "method": request["method"],
                },
                "response": {
                    "proto": "HTTP/2.0",
                    "proto_major": 2,
                    "proto_minor": 0,
                    "content_length": -1,
                    "uncompressed": True,
                    "body": response["body"]["string"],
                    "headers": response["headers"],
                    "status": f"{code} {response['status']['message']}",
                    "code": code,
                    "duration": duration,
                },
            }
        )
    return yaml.safe_dump({"version": 2, "interactions": out}, allow_unicode=True).encode()


def _interactions() -> list[dict]:
    if not CASSETTE.is_file():
        pytest.skip(f"corpus file {CASSETTE.name} is absent")
    return yaml.safe_load(CASSETTE.read_bytes())["interactions"]


@pytest.mark.corpus
def test_a_go_vcr_cassette_reads_its_status_start_and_duration():
    interactions = _interactions()
    trace = analyze_bytes(_go_vcr(interactions), filename="chat.yaml")
    vcrpy = analyze_bytes(CASSETTE.read_bytes(), filename=CASSETTE.name)
    # the same calls and tool runs as the vcrpy recording of the same traffic
    assert [c.tool_call_ids for c in trace.calls] == [c.tool_call_ids for c in vcrpy.calls]
    assert [r.status for r in trace.tool_runs] == [r.status for r in vcrpy.tool_runs]
    assert [c.http_status for c in trace.calls] == [200, 200]
    assert [c.duration_s for c in trace.calls] == [pytest.approx(1.234567), pytest.approx(0.8125)]
    for call, interaction in zip(trace.calls, interactions, strict=True):
        # a JSON answer: the server stamped Date when it sent it, at the call's end
        stamped = parsedate_to_datetime(interaction["response"]["headers"]["Date"][0])
        assert call.started_at == pytest.approx(stamped.timestamp() - call.duration_s)
    assert all(c.duration_s is None for c in vcrpy.calls)  # vcrpy records no duration
    report = build_report(trace)
    assert [c["http_status"] for c in report["calls"]] == [200, 200]


@pytest.mark.corpus
def test_a_go_vcr_call_the_api_refused_is_an_error_with_its_status():
    interactions = _interactions()
    refused = interactions[1]["response"]
    refused["status"] = {"code": 429, "message": "Too Many Requests"}
    refused["body"]["string"] = (
        '{"error": {"message": "Rate limit reached for gpt-4o-mini", "type": "requests",'
        ' "code": "rate_limit_exceeded"}}'
    )
    trace = analyze_bytes(_go_vcr(interactions), filename="chat.yaml")
    second = trace.calls[1]
    assert (second.status, second.http_status) == ("error", 429)
    assert "Rate limit reached" in (second.error or "")
    report = build_report(trace)
    call = report["calls"][1]
    assert call["priced_as"] is not None  # its model has a price, yet:
    assert call["cost_usd"] == 0.0 and call["cost_uncached_usd"] == 0.0  # refused: not billed
    assert call["cost_prefix_cached_usd"] == 0.0
    basis = basis_from_report(report)
    assert basis.calls[2].refused and basis.calls[2].input_usd_per_token == 0.0
    costs, _, _ = simulate(basis, "5m")
    assert costs[2] == 0.0 and costs[1] > 0  # free in the what-if too


def test_go_durations_status_lines_and_an_event_stream_start():
    assert duration_seconds("1h2m3.5s") == pytest.approx(3723.5)
    assert duration_seconds("250\u00b5s") == pytest.approx(0.00025)
    assert duration_seconds("250\u03bcs") == pytest.approx(0.00025)
    assert duration_seconds(1_500_000_000) == pytest.approx(1.5)  # nanoseconds, the unit
    assert [duration_seconds(v) for v in ("", "12", "-1s", "1s junk", True)] == [None] * 5
    assert status_code({"status": "404 Not Found"}) == 404
    assert status_code({"status": "OK"}) is None
    headers = {"Date": ["Fri, 21 Mar 2025 18:54:09 GMT"], "Content-Type": ["text/event-stream"]}
    started, ended = times({"headers": headers, "duration": "2s"})
    assert (started, ended) == (1742583249.0, 1742583251.0)  # a stream: Date is its start
    assert times({"headers": {"Date": ["not a date"]}, "duration": "2s"}) == (None, None)
    assert times({"headers": {}, "duration": "2s"}) == (None, None)
