"""One way to write each quantity: the formats every page, export, diagram and table share."""

from __future__ import annotations

import pytest

from traces.core import formatting
from traces.core.analysis.whatif.savings import money as savings_money
from traces.core.formatting import count, duration, money, percent, plotly_money, tokens_compact


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "unknown"),
        ("", "unknown"),
        (0, "$0"),
        (1234.5678, "$1,234.57"),
        (7.294, "$7.29"),
        (0.2011, "$0.201"),
        (0.0056, "$0.0056"),
        (0.00042, "$0.00042"),
        (-5.2687, "-$5.27"),
    ],
)
def test_money_has_one_style(value, text):
    assert money(value) == text


@pytest.mark.parametrize("value", [1234.5678, 2.0071, 0.0151, 0.0042, 0.00056, 0.000012])
def test_money_keeps_the_style_reports_already_store(value):
    """The what-if sentences ("saves …, $0.015 on this run") are stored in reports, so
    the one style is theirs: every golden report stays byte-identical."""
    assert savings_money(value) == money(value)
    legacy = (
        f"${value:,.2f}"
        if value >= 1
        else f"${value:.3f}"
        if value >= 0.01
        else f"${value:.4f}"
        if value >= 0.001
        else f"${value:.5f}"
    )
    assert money(value) == legacy


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "—"),
        (0, "0.0 s"),
        (0.0915, "92 ms"),
        (12.34, "12.3 s"),
        (65, "1 min 5 s"),
        (2504, "41 min 44 s"),
        (7384, "2 h 3 min"),
        (-0.5, "-500 ms"),
    ],
)
def test_duration_has_one_style(value, text):
    assert duration(value) == text


def test_counts_tokens_and_percentages():
    assert count(None) == "—"
    assert count(1234567) == "1,234,567"
    assert count(1234, exact=False) == "≈1,234"
    assert count(0, exact=False) == "0"
    assert tokens_compact(8_804_000_000) == "8.80 G"
    assert tokens_compact(1_234_567) == "1.23 M"
    assert tokens_compact(12_345) == "12.3 k"
    assert tokens_compact(9_999) == "9,999"
    assert percent(0.1234) == "12.3%"
    assert percent(12.34, scale=1) == "12.3%"
    assert percent(41.6, scale=1, digits=0) == "42%"
    assert percent(None) == "—"
    assert plotly_money("y") == "$%{y:,.4f}"


def test_template_filters_are_the_core_formats():
    from traces.templatetags import inspector

    assert inspector.usd(7.294) == money(7.294) == "$7.29"
    assert inspector.usd(None) == "unknown"
    assert inspector.seconds(65) == duration(65) == "1 min 5 s"
    assert inspector.tokens(12_345) == "12.3 k"
    assert inspector.percent(0.5) == "50.0%"
    assert str(inspector.signed(-0.0042, "usd")) == '<span class="delta-down">−$0.0042</span>'


def test_a_mean_of_counts_has_one_decimal_at_most_and_none_when_whole():
    assert [formatting.mean_count(v) for v in (2.5, 4.0, 12.345, 0.04, 1234.5, None)] == [
        "2.5",
        "4",
        "12.3",
        "0",
        "1,234",
        "—",
    ]


def test_a_saving_below_zero_says_the_fix_costs_more():
    assert formatting.saving(-9.92, -117.7) == "costs $9.92 more (+117.7%)"
    assert formatting.saving(-0.00446) == "costs $0.0045 more"
    assert formatting.saving(1.5, 12.0) == "$1.50"
    assert formatting.saving(0) == "$0"
    assert formatting.saving(None) == "unknown"


def test_a_count_and_its_noun():
    assert formatting.plural(10_000, "call") == "10,000 calls"
    assert formatting.plural(1, "call") == "1 call"
    assert formatting.plural(0, "match", "matches") == "0 matches"


def test_an_eval_score_reads_as_words_or_numbers():
    assert formatting.score_value("C") == "C (correct)"
    assert formatting.score_value("I") == "I (incorrect)"
    assert formatting.score_value("maybe") == "maybe"
    assert formatting.score_value(0.75) == "0.75"
    assert formatting.score_value(1) == "1"
    assert formatting.score_value(True) == "true"
    assert formatting.score_value({"accuracy": 1, "f1": 0.5}) == "accuracy: 1, f1: 0.5"
    assert formatting.score_value(None) == "—"
    assert formatting.score_value({"a": {"b": {"c": {"d": {"e": 1}}}}}) == "a: b: c: d: …"


def test_a_cost_too_small_for_five_decimals_is_not_printed_as_zero():
    assert money(0.0000012) == "<$0.00001"
    assert money(-0.0000012) == "-<$0.00001"
    assert money(0.000006) == "$0.00001"
    assert money(0) == "$0"
