"""The audit log's actions as people say them: "Price set", not its stored code "price.set".

The codes stay what is stored and what `README.md` and scripts name (`note.add`); only the
project page's audit table shows these names, with the code in the row's title.
"""

from __future__ import annotations

from types import MappingProxyType

EVENT_NAMES = MappingProxyType(
    {
        "member.set": "Member role set",
        "note.add": "Note added",
        "note.delete": "Note deleted",
        "note.edit": "Note edited",
        "price.change": "Price changed",
        "price.delete": "Price removed",
        "price.set": "Price set",
        "project.create": "Project created",
        "project.settings": "Project settings changed",
        "share.create": "Share link created",
        "share.revoke": "Share link revoked",
        "token.create": "API token created",
        "token.revoke": "API token revoked",
        "trace.delete": "Trace deleted",
        "trace.live": "Live trace started",
        "trace.upload": "Trace uploaded",
    }
)
"""Every action `traces.services` records (`tests/web/test_audit_names.py` checks none is
missing); a code not listed reads as its words ("set.upload" -> "Set upload")."""


def event_name(action: str) -> str:
    """The human name of an audit action; an unknown code is spelled out, never dropped."""
    known = EVENT_NAMES.get(action)
    if known is not None:
        return known
    words = action.replace(".", " ").replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else "—"
