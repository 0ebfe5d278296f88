"""Mappings as the web layer meets them: one sent with an upload, and the one a stored
trace was read with (kept in its report, so re-reading the trace uses it again).

It exists apart so the upload views and ingest's re-analysis read mappings the same way;
the mapping language itself is the core's (`traces.core.reading.mapping`).
"""

from __future__ import annotations

from typing import Any

import orjson

from traces.core.reading.mapping import Mapping, load_mapping


def stored_mapping(report: dict | None) -> Mapping | None:
    """The mapping a trace was read with, kept in its report (no model field needed)."""
    kept = (report or {}).get("mapping")
    if not isinstance(kept, dict) or not isinstance(kept.get("spec"), dict):
        return None
    return load_mapping(orjson.dumps(kept["spec"]), str(kept.get("name") or "mapping"))


def mapping_from_upload(upload: Any = None, text: str | None = None) -> Mapping | None:
    """A mapping sent with an upload: a file field, or the mapping's text in a form field."""
    if upload is not None:
        return load_mapping(upload.read(), getattr(upload, "name", "") or "mapping")
    if text:
        return load_mapping(text.encode(), "mapping")
    return None
