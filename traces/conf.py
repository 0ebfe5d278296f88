"""Loop Inspector's own settings: every key, its default, and the one getter that reads them.

A key's value comes from `settings.INSPECTOR[KEY]` (and `override_settings` in tests), else
from the environment variable `INSPECTOR_<KEY>` (parsed by the type of its default, see
traces.environment), else from DEFAULTS. docs/settings.md documents every key (a test
holds it to DEFAULTS); a variable that does not parse is a system check error
(traces.checks), and its default is used meanwhile.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

from traces.core.analysis.pricing import PriceTable, library_table, load_overrides
from traces.core.reading.limits import Limits
from traces.environment import Environment

ENVIRONMENT_PREFIX = "INSPECTOR_"

DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {
        "MAX_UPLOAD_BYTES": 512 * 1024 * 1024,
        "MAX_DECOMPRESSED_BYTES": 2 * 1024 * 1024 * 1024,
        "MAX_DEPTH": 254,
        # A JSON price file overriding the bundled table (same shape; per million tokens).
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
        # The recording proxy and the OTLP receiver (traces.capture): the largest request and
        # (decoded) response a proxied call may have, the upstream's connect and read
        # timeouts (s), the largest OTLP body as sent and once decompressed.
        "PROXY_MAX_REQUEST_BYTES": 32 * 1024 * 1024,
        "PROXY_MAX_RESPONSE_BYTES": 64 * 1024 * 1024,
        "PROXY_CONNECT_TIMEOUT": 10.0,
        "PROXY_READ_TIMEOUT": 600.0,
        "OTLP_MAX_BYTES": 16 * 1024 * 1024,
        "OTLP_MAX_DECOMPRESSED_BYTES": 64 * 1024 * 1024,
        # The queue stores an OTLP export's traces this many to a transaction, so one
        # export of 10,000 traces never holds SQLite's write lock for long.
        "OTLP_BATCH_TRACES": 100,
        # The "On this machine" page's watching (traces.live.machine): seconds between two
        # passes over a watched store; and between them, seconds between two looks at the
        # sessions followed live (a stat each: an append reaches an open page within it).
        "WATCH_INTERVAL_SECONDS": 2.0,
        "WATCH_FOLLOW_SECONDS": 0.2,
    }
)


def environment_name(key: str) -> str:
    """The environment variable that sets `key`."""
    return ENVIRONMENT_PREFIX + key


def from_environment(environ: dict[str, str] | None = None) -> tuple[dict[str, Any], list[str]]:
    """The keys set in the environment, each parsed by its default's type, and why the
    ones that did not parse were left out (one sentence naming the variable each)."""
    env = Environment(environ)
    values = {
        key: env.get(environment_name(key), default)
        for key, default in DEFAULTS.items()
        if environment_name(key) in env.environ
    }
    return values, env.problems


@cache
def inspector_settings() -> dict[str, Any]:
    """Every key's value: settings.INSPECTOR over the environment over DEFAULTS. Read once
    per process (and again after `override_settings(INSPECTOR=...)`)."""
    from_env, _problems = from_environment()  # reported by traces.checks
    return {**DEFAULTS, **from_env, **getattr(settings, "INSPECTOR", {})}


@receiver(setting_changed)
def _forget_settings(*, setting: str, **kwargs: Any) -> None:
    """Tests override INSPECTOR with `override_settings`: the cached merge must follow."""
    if setting == "INSPECTOR":
        inspector_settings.cache_clear()
        price_table.cache_clear()


@cache
def price_table() -> PriceTable:
    """The `genai-prices` prices, overridden by the file the PRICES key names
    (INSPECTOR_PRICES): `{"model": {"input": 3.0, "output": 15.0, ...}}` per million.
    Prices set in the UI win over both (`traces.services.prices.price_table_for`)."""
    table = library_table()
    path = inspector_settings()["PRICES"]
    if path:
        table = table.merged(load_overrides(Path(path).read_bytes()), f"the price file {path}")
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
