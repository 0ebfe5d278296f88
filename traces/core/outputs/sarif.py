"""Findings as SARIF 2.1.0, so CI systems and code-scanning UIs can show loop lint.

Each finding points at the trace file and the line of the call it concerns. Results are
grouped by file: every file linted is listed once in the run's `artifacts` (with how many
results it has), and each result names its file by that index, in the files' order.
"""

from __future__ import annotations

from typing import Any

from ..analysis.rules.base import Finding
from ..analysis.rules.registry import rules
from ..model import Trace

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def to_sarif(
    runs: list[tuple[str, Trace, list[Finding]]],
    *,
    version: str,
    rules_url: str = "",
) -> dict[str, Any]:
    """One SARIF run for all files; `runs` holds (file uri, trace, findings) triples."""
    rule_classes = rules()
    index = {rule.id: position for position, rule in enumerate(rule_classes)}
    descriptors = []
    for rule in rule_classes:
        docs = rule.documentation()
        descriptor: dict[str, Any] = {
            "id": rule.id,
            "name": "".join(part.capitalize() for part in rule.id.split("-")),
            "shortDescription": {"text": docs.get("summary") or rule.id},
            "fullDescription": {"text": docs.get("what it finds") or docs.get("summary", "")},
            "help": {"text": docs.get("how to fix") or ""},
            "defaultConfiguration": {"level": LEVELS[rule.severity]},
        }
        if rules_url:
            descriptor["helpUri"] = f"{rules_url.rstrip('/')}/{rule.id}/"
        descriptors.append(descriptor)
    results = []
    artifacts = []
    for artifact_index, (uri, trace, findings) in enumerate(runs):
        artifacts.append({"location": {"uri": uri}, "properties": {"results": len(findings)}})
        lines = {call.index: call.line for call in trace.calls}
        for finding in findings:
            result: dict[str, Any] = {
                "ruleId": finding.rule,
                "ruleIndex": index.get(finding.rule, 0),
                "level": LEVELS[finding.severity],
                "message": {"text": finding.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": uri, "index": artifact_index},
                            "region": {"startLine": max(1, lines.get(finding.call or 0, 1))},
                        }
                    }
                ],
            }
            properties: dict[str, int | str | None] = {"call": finding.call, "loop": finding.loop}
            if finding.tool_call_id is not None:
                properties["toolCallId"] = finding.tool_call_id
            result["properties"] = properties
            results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "Loop Inspector",
                        "version": version,
                        "informationUri": "https://github.com/loop-inspector/loop-inspector",
                        "rules": descriptors,
                    }
                },
                "artifacts": artifacts,
                "results": results,
            }
        ],
    }
