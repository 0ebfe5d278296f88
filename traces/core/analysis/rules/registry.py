"""Rule registry: every module in traces.core.analysis.rules registers its rule on import."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from ...model import Trace
from ..accounting import Accounting
from .base import SEVERITY_ORDER, Finding, LintContext, Rule

_RULES: dict[str, type[Rule]] = {}
_INFRASTRUCTURE = {"base", "registry"}


def register(rule: type[Rule]) -> type[Rule]:
    if not rule.id or rule.id != rule.id.lower() or " " in rule.id:
        raise ValueError(f"{rule.__qualname__} needs a kebab-case id")
    if rule.id in _RULES and _RULES[rule.id] is not rule:
        raise ValueError(f"two rules are called {rule.id!r}")
    _RULES[rule.id] = rule
    return rule


@cache
def _load_all() -> None:
    package = importlib.import_module(__package__ or "traces.core.analysis.rules")
    for module in pkgutil.iter_modules(package.__path__):
        if module.name not in _INFRASTRUCTURE and not module.name.startswith("_"):
            importlib.import_module(f"{package.__name__}.{module.name}")


def rules() -> list[type[Rule]]:
    _load_all()
    return [_RULES[name] for name in sorted(_RULES)]


def get_rule(rule_id: str) -> type[Rule]:
    _load_all()
    return _RULES[rule_id]


def run_rules(
    trace: Trace,
    accounting: Accounting,
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] = (),
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Finding]:
    """Apply the selected rules; findings sorted by call, severity, rule, tool call id."""
    chosen = set(select) if select else None
    skipped = set(ignore)
    ctx = LintContext(trace, accounting)
    findings: list[Finding] = []
    for rule_class in rules():
        if (chosen is not None and rule_class.id not in chosen) or rule_class.id in skipped:
            continue
        rule = rule_class((options or {}).get(rule_class.id))
        findings.extend(rule.check(ctx))
    return sorted(
        findings,
        key=lambda f: (
            f.call if f.call is not None else 0,
            SEVERITY_ORDER[f.severity],
            f.rule,
            f.tool_call_id or "",
        ),
    )
