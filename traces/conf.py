"""Loop Inspector's settings: one `INSPECTOR` dict merged over these defaults."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

from traces.core.analysis.pricing import PriceTable, bundled_table, load_overrides
from traces.core.reading.limits import Limits

DEFAULTS: dict[str, Any] = {
    "MAX_UPLOAD_BYTES": 512 * 1024 * 1024,
    "MAX_DECOMPRESSED_BYTES": 2 * 1024 * 1024 * 1024,
    "MAX_DEPTH": 254,
    "CALLS_PER_PAGE": 200,
    "PRICES": "",
    # Per API token (shared mode): traces created per minute, bytes sent per UTC day
    # (uploads, live lines and websocket frames); 0 turns a limit off.
    "TOKEN_UPLOADS_PER_MINUTE": 60,
    "TOKEN_BYTES_PER_DAY": 20 * 1024 * 1024 * 1024,
    "INGEST_WORKERS": 2,
    "MAX_DOCUMENT_VALUES": 5_000_000,
    "MAX_DECOMPRESSION_RATIO": 200,
    # Live traces: closed after this long without a line; a busy trace's report rebuilt
    # at most every LIVE_REPORT_INTERVAL s; sessions kept per process; how long a held
    # last message may still grow.
    "LIVE_IDLE_SECONDS": 600,
    "LIVE_REPORT_INTERVAL": 1.0,
    "LIVE_SESSIONS": 32,
    "LIVE_SETTLE_SECONDS": 2.0,
    # Uploads over this many bytes are streamed to INSPECTOR_DATA_DIR and ingested by a
    # background job (202 and a status URL); smaller ones are ingested in the request.
    "BACKGROUND_UPLOAD_BYTES": 8 * 1024 * 1024,
    # Decoded reports kept per process (traces.storage.report_cache): at most this many, and at
    # most this many bytes of their stored JSON (decoded, a report takes ~2.7 times that).
    "REPORT_CACHE_ENTRIES": 8,
    "REPORT_CACHE_BYTES": 32 * 1024 * 1024,
    # Background jobs: a running job whose worker has not written its heartbeat for this
    # long is queued again (its upload is still on disk), at most JOB_MAX_ATTEMPTS times.
    "JOB_STALE_SECONDS": 120,
    "JOB_MAX_ATTEMPTS": 3,
}


@cache
def inspector_settings() -> dict[str, Any]:
    return {**DEFAULTS, **getattr(settings, "INSPECTOR", {})}


@receiver(setting_changed)
def _forget_settings(*, setting: str, **kwargs: Any) -> None:
    """Tests override INSPECTOR with `override_settings`: the cached merge must follow."""
    if setting in ("INSPECTOR", "INSPECTOR_PRICES"):
        inspector_settings.cache_clear()
        price_table.cache_clear()


@cache
def price_table() -> PriceTable:
    """The bundled prices, overridden by the file named in INSPECTOR_PRICES (or
    INSPECTOR["PRICES"]): `{"model": {"input": 3.0, "output": 15.0, ...}}` per million."""
    table = bundled_table()
    path = getattr(settings, "INSPECTOR_PRICES", "") or inspector_settings()["PRICES"]
    if path:
        table = table.merged(load_overrides(Path(path).read_bytes()))
    return table


def limits() -> Limits:
    conf = inspector_settings()
    return Limits(
        max_file_bytes=conf["MAX_UPLOAD_BYTES"],
        max_decompressed_bytes=conf["MAX_DECOMPRESSED_BYTES"],
        max_depth=conf["MAX_DEPTH"],
        max_document_values=conf["MAX_DOCUMENT_VALUES"],
        max_decompression_ratio=conf["MAX_DECOMPRESSION_RATIO"],
    )
