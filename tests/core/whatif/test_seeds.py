"""The what-if engine reproduces the seeds' numbers exactly, on traces of their shapes."""

from __future__ import annotations

import pytest

from tests.core.whatif.traces import calendar_serial, clinic_visit, sundry_run, three_tools_events
from traces.core.analysis.accounting import account
from traces.core.analysis.ingest import analyze_bytes
from traces.core.analysis.pricing import library_table, load_overrides
from traces.core.analysis.whatif import build_what_if
from traces.core.outputs.report import build_report
from traces.core.reading.sample import sample_bytes


def scenario(what_if: dict, scenario_id: str) -> dict:
    return next(s for s in what_if["scenarios"] if s["id"] == scenario_id)


def test_capping_the_900_token_order_at_340_turns_8100_into_3060():
    """Seed 003: a 900-token result on turn 3 of 12, re-sent 9 times."""
    report = build_report(analyze_bytes(sundry_run()))
    what_if = build_what_if(report, {"cap:get_order": "340"})
    cap = scenario(what_if, "cap-results")
    (order,) = [item for item in cap["items"] if item["tool"] == "get_order"]
    assert (order["tokens_before"], order["tokens_after"]) == (8_100, 3_060)
    assert order["tokens_saved"] == 5_040 and order["exact"]
    assert order["usd_saved"] == pytest.approx(5_040 * 3 / 1e6)  # $3 per million input
    assert cap["tokens_saved"] == 5_040 and cap["parameters"]["caps"] == {"get_order": 340}
    assert cap["calls"] == list(range(4, 13))  # the nine requests that carried it
    assert cap["tokens_after"] == cap["tokens_before"] - 5_040
    instruction = next(s for s in what_if["top_savings"] if s["scenario"] == "cap-results")
    assert instruction["text"] == (
        "cap get_order at 340 tokens: saves 5,040 input tokens, $0.015 on this run"
    )


def test_the_default_cap_is_the_oversized_threshold():
    report = build_report(analyze_bytes(sundry_run()))
    cap = scenario(report["what_if"], "cap-results")
    (order,) = [item for item in cap["items"] if item["tool"] == "get_order"]
    assert order["cap"] == 800 and order["tokens_saved"] == 100 * 9
    assert order["median_result"] == 900 and order["largest_result"] == 900
    (search,) = [item for item in cap["items"] if item["tool"] == "search_kb"]
    assert search["cap"] is None and search["tokens_saved"] == 0


def test_clinic_prices_uncached_054_cached_033():
    """Seed 002: 15k input and 600 output at $3/$15; the 4.5k prefix written once at
    1.25x and read twice at 0.1x."""
    report = build_report(analyze_bytes(clinic_visit()))
    cache = scenario(report["what_if"], "prompt-cache")
    assert cache["uncached_usd"] == pytest.approx(0.054)
    assert cache["prefix_cached_usd"]["5m"] == pytest.approx(0.033075)
    assert round(cache["prefix_cached_usd"]["5m"], 3) == 0.033
    assert cache["actual_usd"] == pytest.approx(0.054)  # nothing was cached in the run
    assert cache["usd_saved"] == pytest.approx(0.054 - 0.033075)
    assert cache["rewrites"] == [] and cache["status"] == "ok"
    # The report's own "prefix cached" figure (no lifetime) agrees when no gap expires.
    assert report["totals"]["cost_usd"]["prefix_cached"] == pytest.approx(0.033075)


def test_clinic_is_054_and_033_at_the_seeds_prices_set_as_an_override():
    """The seeds' illustrative prices ($3 / $15, writes 1.25x, reads 0.1x) given as a
    price file for a model no library knows: the same two figures, from the override."""
    data = clinic_visit().replace(b"claude-sonnet-4-5", b"seed-illustrative-model")
    overrides = load_overrides(
        b'{"seed-illustrative-model": {"input": 3, "output": 15, '
        b'"cache_write": 3.75, "cache_read": 0.3}}'
    )
    table = library_table().merged(overrides, "the seeds' prices")
    report = build_report(analyze_bytes(data), prices=table)
    cache = scenario(report["what_if"], "prompt-cache")
    assert cache["uncached_usd"] == pytest.approx(0.054)
    assert round(cache["prefix_cached_usd"]["5m"], 3) == 0.033
    assert report["accounting"]["unpriced_models"] == []
    # Without the override nobody prices that model: no figure is made up.
    unpriced = build_report(analyze_bytes(data))
    assert unpriced["accounting"]["unpriced_models"] == ["seed-illustrative-model"]


@pytest.mark.parametrize(
    "lifetime, gap, expected",
    [
        # 5-minute lifetime: call 3 comes 299 s / 301 s after call 2.
        ("5m", 299.0, (4500 * 3.75 + 2 * 4500 * 0.3 + 1500 * 3 + 600 * 15) / 1e6),
        ("5m", 301.0, (2 * 4500 * 3.75 + 4500 * 0.3 + 1500 * 3 + 600 * 15) / 1e6),
        # 1-hour lifetime: writes at 2x input ($6), the same gaps around 3,600 s.
        ("1h", 3599.0, (4500 * 6 + 2 * 4500 * 0.3 + 1500 * 3 + 600 * 15) / 1e6),
        ("1h", 3601.0, (2 * 4500 * 6 + 4500 * 0.3 + 1500 * 3 + 600 * 15) / 1e6),
    ],
)
def test_cache_lifetime_applied_to_the_real_gaps(lifetime, gap, expected):
    report = build_report(analyze_bytes(clinic_visit(gaps=(60.0, gap))))
    cache = scenario(build_what_if(report, {"cache_lifetime": lifetime}), "prompt-cache")
    assert cache["prefix_cached_usd"][lifetime] == pytest.approx(expected)
    assert cache["usd_after"] == pytest.approx(expected)
    if gap > {"5m": 300, "1h": 3600}[lifetime]:
        assert cache["rewrites"] == [
            {
                "call": 3,
                "after_call": 2,
                "gap_s": gap,
                "gap": cache["rewrites"][0]["gap"],
                "tokens": 4500,
            }
        ]
        assert cache["calls"] == [3]
    else:
        assert cache["rewrites"] == [] and cache["calls"] == []


def test_a_gap_of_exactly_the_lifetime_still_hits():
    report = build_report(analyze_bytes(clinic_visit(gaps=(300.0, 300.0))))
    cache = scenario(report["what_if"], "prompt-cache")
    assert cache["rewrites"] == []
    assert cache["prefix_cached_usd"]["5m"] == pytest.approx(0.033075)


def test_calendar_task_serial_versus_batched():
    """Seed 000: asking the two availability checks one per round trip adds a call of
    1,620 input tokens ("an extra round trip of 1,500 tokens or more"); batched, the
    task reads the seed's 6,160 input tokens."""
    report = build_report(analyze_bytes(calendar_serial()))
    assert report["totals"]["input_tokens"] == 7_780
    batch = scenario(report["what_if"], "batch-serial-calls")
    assert batch["items"] == [
        {
            "call": 3,
            "batched_into": 2,
            "tools": ["check_availability"],
            "input_tokens": 1_620,
            "usd_saved": pytest.approx(1_620 * 3 / 1e6),
            "model_seconds": 2.4,
        }
    ]
    assert (batch["tokens_before"], batch["tokens_after"]) == (7_780, 6_160)
    assert batch["seconds_saved"] == 2.4 and batch["exact"]
    # The batched run is the seed's (and the bundled sample's) own accounting.
    batched = account(analyze_bytes(sample_bytes()))
    assert batched.buckets.total == batch["tokens_after"]


def test_three_two_second_tools_run_concurrently_take_two_seconds():
    """Seed 003: three 2-second calls in sequence are 6 s; concurrently, 2 s."""
    report = build_report(analyze_bytes(three_tools_events(2.0)))
    concurrent = scenario(report["what_if"], "concurrent-tools")
    (batch,) = concurrent["items"]
    assert batch["timings"] == "recorded"
    assert (batch["sum_s"], batch["wall_s"], batch["slowest_s"]) == (6.0, 6.0, 2.0)
    assert batch["seconds_saved"] == 4.0 and concurrent["seconds_saved"] == 4.0
    assert concurrent["tokens_saved"] is None and concurrent["usd_saved"] is None


def test_tools_that_already_overlapped_save_nothing():
    report = build_report(analyze_bytes(three_tools_events(2.0, concurrent=True)))
    concurrent = scenario(report["what_if"], "concurrent-tools")
    assert concurrent["items"][0]["wall_s"] == 2.0
    assert concurrent["seconds_saved"] == 0.0


def test_clinic_054_033_exact_with_the_seeds_prices_as_an_override():
    """The seed's illustrative prices ($3 / $15, writes 1.25x, reads 0.1x) set as a user
    override: whatever the library's prices, the seed's figures come out exactly."""
    from traces.core.analysis.pricing import library_table, load_overrides

    seed = load_overrides(
        b'{"claude-sonnet-4-5": {"input": 3, "output": 15, "cache_write": 3.75, "cache_read": 0.3}}'
    )
    report = build_report(analyze_bytes(clinic_visit()), prices=library_table().merged(seed))
    cache = scenario(report["what_if"], "prompt-cache")
    assert cache["uncached_usd"] == pytest.approx(0.054)
    assert round(cache["prefix_cached_usd"]["5m"], 3) == 0.033
    assert cache["prefix_cached_usd"]["5m"] == pytest.approx(0.033075)
    assert report["accounting"]["unpriced_models"] == []
