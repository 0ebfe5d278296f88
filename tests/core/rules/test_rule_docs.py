"""Every registered rule is documented and named the way the /rules/ pages expect."""

from __future__ import annotations

import re

import pytest

from traces.core.analysis.rules.registry import rules

KEBAB = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)+$")
SECTIONS = ("what it finds", "why it matters", "example", "how to fix")


@pytest.mark.parametrize("rule", rules(), ids=lambda rule: rule.id)
def test_rule_is_documented(rule):
    assert KEBAB.match(rule.id), rule.id
    assert rule.severity in ("error", "warning", "info")
    assert rule.message.strip() and "\n" not in rule.message
    documentation = rule.documentation()
    assert documentation["summary"], f"{rule.id} needs a one-line summary"
    for section in SECTIONS:
        assert documentation.get(section), f"{rule.id} lacks the '{section}' section"


def test_rule_modules_hold_one_rule_each():
    modules = [rule.__module__ for rule in rules()]
    assert len(modules) == len(set(modules))
    assert all(
        module.rsplit(".", 1)[1] == rule.id.replace("-", "_")
        for module, rule in zip(modules, rules(), strict=True)
    )


def test_the_issue_rules_are_registered():
    assert {rule.id for rule in rules()} >= {
        "orphan-tool-result",
        "duplicate-tool-call-id",
        "missing-tool-use-echo",
        "invalid-tool-arguments",
        "unknown-tool",
        "oversized-tool-result",
        "truncated-tool-result",
        "bare-error-result",
        "stack-trace-result",
        "prefix-changed",
        "history-rewritten",
        "serial-independent-calls",
        "split-parallel-results",
        "results-out-of-order",
        "repeated-tool-call",
        "max-tokens-stop",
        "tool-format-switch",
        "untrusted-instructions-in-result",
        "slow-tool",
        "dangling-tool-call",
        "api-error",
    }
