"""Four ways a proxied call can fail to complete, told apart (issue 23): a client that
hangs up mid-stream (httpx), an upstream that breaks off mid-stream, an upstream that
does not answer in time, and an API error (the Anthropic SDK) are each their own outcome
on the call (the stored line, the report, the call page) and their own finding; only
the last is `api-error`, "rejected by the API"."""

from __future__ import annotations

import anthropic
import httpx
import pytest

from tests.capture.scenario import SECRET
from tests.capture.test_proxy_edges import recorded_line

pytestmark = pytest.mark.corpus

BODY = {"max_tokens": 50, "messages": [{"role": "user", "content": "hello"}]}


def _client(server, session: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key=SECRET, base_url=f"{server.base}/proxy/s/{session}/anthropic", max_retries=0
    )


def _outcome(server, session: str) -> tuple[dict, list[str], dict]:
    trace_id = server.trace_id(f"proxy:anthropic-messages:{session}")
    report = server.wait_report(trace_id, calls=1)
    rules = [f["rule"] for f in report["findings"] if f.get("call") == 1]
    page = server.get(f"/traces/{trace_id}/calls/1/").decode()
    return report["calls"][0], rules, {"line": recorded_line(server, trace_id), "page": page}


def test_a_client_that_hangs_up_mid_stream_left_and_the_api_did_nothing_wrong(
    inspector_server,
):
    with httpx.stream(
        "POST",
        f"{inspector_server.base}/proxy/s/outcome-left/anthropic/v1/messages",
        json={**BODY, "model": "slow", "stream": True},
        headers={"x-api-key": SECRET},
        timeout=30,
    ) as response:
        next(response.iter_raw())  # the first event, then hang up
    call, rules, seen = _outcome(inspector_server, "outcome-left")
    assert call["status"] == "error"
    assert call["call_outcome"] == seen["line"]["call_outcome"] == "client-left"
    assert "client-left" in rules and "api-error" not in rules
    assert 'data-outcome="client-left"' in seen["page"]
    assert "the client left" in seen["page"]


def test_an_upstream_that_breaks_off_mid_stream_is_not_a_rejection(inspector_server):
    with (
        pytest.raises(anthropic.APIStatusError),
        _client(inspector_server, "outcome-cut").messages.stream(model="cut", **BODY) as stream,
    ):
        stream.get_final_message()
    call, rules, seen = _outcome(inspector_server, "outcome-cut")
    assert call["call_outcome"] == "upstream-broke-off"
    assert "upstream-broke-off" in rules and "api-error" not in rules
    assert 'data-outcome="upstream-broke-off"' in seen["page"]


def test_an_upstream_that_does_not_answer_in_time_timed_out(inspector_server):
    with pytest.raises(anthropic.APIStatusError) as caught:
        _client(inspector_server, "outcome-slow").messages.create(model="hang", **BODY)
    assert caught.value.status_code == 504
    call, rules, seen = _outcome(inspector_server, "outcome-slow")
    assert (call["call_outcome"], call["http_status"]) == ("timeout", 504)
    assert "upstream-timeout" in rules and "api-error" not in rules
    assert "timed out" in seen["page"]


def test_an_api_error_is_still_rejected_by_the_api(inspector_server):
    with pytest.raises(anthropic.RateLimitError):
        _client(inspector_server, "outcome-429").messages.create(model="error-429", **BODY)
    call, rules, seen = _outcome(inspector_server, "outcome-429")
    assert (call["call_outcome"], call["http_status"]) == ("api-error", 429)
    assert "api-error" in rules
    assert not {"client-left", "upstream-broke-off", "upstream-timeout"} & set(rules)
    assert 'data-outcome="api-error"' in seen["page"]
