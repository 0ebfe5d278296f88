"""Log lines never carry a credential from a URL's query (issue 26: a proxied call's
`?key=…` reached daphne's access log and httpx's request log).

`MaskQueryCredentials` is a logging filter on the console handler: every argument of a
record that looks like a URL or a path with a query has its secret parameters masked,
by the same rule as the pages (`traces.core.reading.credentials`). Daphne's access log
is not written through logging, so `patch_access_log` masks the path it writes.
"""

from __future__ import annotations

import logging
from typing import Any

from traces.core.reading.credentials import mask_query


def _masked(value: Any) -> Any:
    text = value if isinstance(value, str) else None
    if text is None and type(value).__name__ == "URL":  # httpx.URL
        text = str(value)
    if text is None or "?" not in text:
        return value
    return mask_query(text)


class MaskQueryCredentials(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(_masked(arg) for arg in record.args)
        elif isinstance(record.msg, str) and "?" in record.msg and not record.args:
            record.msg = mask_query(record.msg)
        return True


def patch_access_log() -> None:
    """Daphne's access log writes each request's path, query included: masked here."""
    try:
        from daphne.access import AccessLogGenerator
    except ImportError:
        return
    if getattr(AccessLogGenerator, "_inspector_masked", False):
        return
    original = AccessLogGenerator.__call__

    def __call__(self, protocol, action, details):
        if isinstance(details, dict) and isinstance(details.get("path"), str):
            details = {**details, "path": mask_query(details["path"])}
        return original(self, protocol, action, details)

    AccessLogGenerator.__call__ = __call__
    AccessLogGenerator._inspector_masked = True
