"""Loop Inspector's settings: one `INSPECTOR` dict merged over these defaults."""

from __future__ import annotations

from functools import cache
from typing import Any

from django.conf import settings

from traces.core.limits import Limits

DEFAULTS: dict[str, Any] = {
    "MAX_UPLOAD_BYTES": 512 * 1024 * 1024,
    "MAX_DECOMPRESSED_BYTES": 2 * 1024 * 1024 * 1024,
    "MAX_DEPTH": 254,
    "CALLS_PER_PAGE": 200,
}


@cache
def inspector_settings() -> dict[str, Any]:
    return {**DEFAULTS, **getattr(settings, "INSPECTOR", {})}


def limits() -> Limits:
    conf = inspector_settings()
    return Limits(
        max_file_bytes=conf["MAX_UPLOAD_BYTES"],
        max_decompressed_bytes=conf["MAX_DECOMPRESSED_BYTES"],
        max_depth=conf["MAX_DEPTH"],
    )
