"""Every action the services record has a name people read on the audit log."""

from __future__ import annotations

import re
from pathlib import Path

from traces.web.audit_names import EVENT_NAMES, event_name

TRACES = Path(__file__).resolve().parents[2] / "traces"
RECORDED = re.compile(r"\baudit\(\s*[\w.]+,\s*\"([a-z_]+\.[a-z_.]+)\"", re.S)


def recorded_actions() -> set[str]:
    return {
        action
        for path in TRACES.rglob("*.py")
        for action in RECORDED.findall(path.read_text(encoding="utf-8"))
    }


def test_every_recorded_action_has_a_name():
    actions = recorded_actions()
    assert {"trace.upload", "price.set", "note.add", "share.revoke"} <= actions  # the scan works
    assert sorted(actions - set(EVENT_NAMES)) == []


def test_an_unknown_code_is_spelled_out_not_dropped():
    assert event_name("price.set") == "Price set"
    assert event_name("set.bulk_upload") == "Set bulk upload"
    assert event_name("") == "—"
