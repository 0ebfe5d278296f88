"""Prices from genai-prices: each call at its own date, tiers and cache as the library
bills them, and overrides winning over it."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import orjson
import pytest
from genai_prices import Usage as LibraryUsage
from genai_prices import calc_price

from tests.core.builders import log, response, user
from traces.core.analysis.accounting import account
from traces.core.analysis.ingest import analyze_bytes
from traces.core.analysis.pricing import call_cost, library_table, load_overrides
from traces.core.model import Usage

BEFORE = datetime(2025, 6, 1, 12, tzinfo=UTC).timestamp()  # o3 at $10 / $40
AFTER = datetime(2025, 6, 20, 12, tzinfo=UTC).timestamp()  # o3 at $2 / $8 from 2025-06-10


def dated_calls(model: str, *starts: float, input_tokens: int = 1000, output: int = 100) -> bytes:
    """One Anthropic-shaped request/response line per start time, all of `model`."""
    lines = []
    messages = [user("What changed?")]
    for start in starts:
        resp = response([{"type": "text", "text": "Prices."}], "end_turn", input_tokens, output)
        resp["model"] = model
        body = {"model": model, "system": "You help.", "messages": messages}
        lines.append(
            orjson.dumps(
                {"request": body, "response": resp, "started_at": start, "ended_at": start + 1}
            )
        )
    return log(*lines)


def test_the_same_model_on_two_dates_is_priced_at_each_dates_price():
    accounting = account(analyze_bytes(dated_calls("o3", BEFORE, AFTER)))
    first, second = (c.cost_usd for c in accounting.calls)
    assert first == pytest.approx((1000 * 10 + 100 * 40) / 1e6)
    assert second == pytest.approx((1000 * 2 + 100 * 8) / 1e6)
    # And exactly what the library itself says for those dates.
    for cost, at in ((first, BEFORE), (second, AFTER)):
        library = calc_price(
            LibraryUsage(input_tokens=1000, output_tokens=100),
            "o3",
            genai_request_timestamp=datetime.fromtimestamp(at, tz=UTC),
        )
        assert Decimal(str(cost)) == library.total_price
    assert accounting.unpriced_models == ()
    assert "genai-prices" in accounting.prices_source


@pytest.mark.parametrize(
    "model, usage, at",
    [
        ("claude-sonnet-4-20250514", Usage(900, 50, 100, 2000, cache_write_1h_tokens=500), AFTER),
        ("gpt-4o", Usage(800, 20, 100, 100), AFTER),
        # Long context: above 200k tokens in, the whole call at the tier's prices.
        ("claude-sonnet-4-5", Usage(150_000, 1_000, 60_000, 0), AFTER),
        ("gemini-2.5-pro", Usage(250_000, 2_000, 0, 0), AFTER),
        ("gpt-5.6-terra", Usage(300_000, 1_000, 0, 0), BEFORE + 400 * 86400),
        # DeepSeek's off-peak hours: the same day, two prices by time of day.
        (
            "deepseek-chat",
            Usage(1_000, 100, 500, 0),
            datetime(2026, 5, 1, 3, tzinfo=UTC).timestamp(),
        ),
        (
            "deepseek-chat",
            Usage(1_000, 100, 500, 0),
            datetime(2026, 5, 1, 20, tzinfo=UTC).timestamp(),
        ),
    ],
)
def test_costs_agree_with_the_librarys_own_calc_price(model, usage, at):
    found = library_table().lookup(model, at)
    assert found is not None
    library = calc_price(
        LibraryUsage(
            input_tokens=usage.total_input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            **(
                {"cache_write_1h_tokens": usage.cache_write_1h_tokens}
                if usage.cache_write_1h_tokens
                else {}
            ),
        ),
        model,
        genai_request_timestamp=datetime.fromtimestamp(at, tz=UTC),
    )
    assert call_cost(usage, found[1]) == pytest.approx(float(library.total_price), rel=1e-12)


def test_an_override_file_wins_over_the_library():
    table = library_table().merged(
        load_overrides(b'{"o3": {"input": 1, "output": 2}}'), "the price file test.json"
    )
    accounting = account(analyze_bytes(dated_calls("o3", BEFORE, AFTER)), table)
    assert [c.cost_usd for c in accounting.calls] == [pytest.approx(1200 / 1e6)] * 2
    assert [c.model_priced_as for c in accounting.calls] == ["o3", "o3"]
    assert "overridden by the price file test.json" in accounting.prices_source


def test_a_trace_the_overrides_price_whole_says_so_and_one_they_do_not_names_the_library():
    overrides = load_overrides(b'{"o3": {"input": 1, "output": 2}}')
    table = library_table().merged(overrides, "the price file test.json")
    whole = account(analyze_bytes(dated_calls("o3", AFTER)), table)
    assert (whole.prices_taken, whole.prices_source) == (
        "the price file test.json",
        "every model overridden by the price file test.json (genai-prices not needed)",
    )
    partly = account(analyze_bytes(dated_calls("gpt-4o", AFTER)), table)
    assert partly.prices_source.startswith("genai-prices ")
    assert partly.prices_source.endswith("; overridden by the price file test.json")


def test_a_model_nobody_prices_is_unknown_and_named():
    accounting = account(analyze_bytes(dated_calls("acme-frontier-9", AFTER)))
    assert accounting.calls[0].cost_usd is None
    assert accounting.unpriced_models == ("acme-frontier-9",)
    priced = library_table().merged(
        load_overrides(b'{"acme-frontier-9": {"input": 4, "output": 8}}')
    )
    again = account(analyze_bytes(dated_calls("acme-frontier-9", AFTER)), priced)
    assert again.calls[0].cost_usd == pytest.approx((1000 * 4 + 100 * 8) / 1e6)
    assert again.unpriced_models == ()


def test_off_peak_hours_are_told_apart_within_one_day():
    table = library_table()
    peak = table.lookup("deepseek-chat", datetime(2026, 5, 1, 3, tzinfo=UTC).timestamp())
    off_peak = table.lookup("deepseek-chat", datetime(2026, 5, 1, 20, tzinfo=UTC).timestamp())
    assert peak is not None and off_peak is not None
    assert peak[1].input != off_peak[1].input


@pytest.mark.parametrize(
    "model, priced_as",
    [
        ("moonshot.kimi-k2-thinking", "moonshotai/kimi-k2-thinking"),  # Bedrock, in the corpus
        ("us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet-latest"),
        ("claude-sonnet-4.5", "claude-sonnet-4-5"),  # a dot, not a vendor
    ],
)
def test_bedrock_and_dotted_names_find_the_librarys_model(model, priced_as):
    found = library_table().lookup(model, AFTER)
    assert found is not None and found[0] == priced_as
