"""Per-token limits: uploads per minute and bytes per day, counted in the shared cache.

Fixed windows (the current minute, the current UTC day): cheap, and enough to stop a
runaway agent; a refusal says when the window ends (HTTP 429 with Retry-After).
"""

from __future__ import annotations

import time

from django.core.cache import cache

from traces.conf import inspector_settings


def _count(key: str, amount: int, window: int) -> int:
    """Add `amount` to the window's counter and return the new total."""
    cache.add(key, 0, timeout=window + 5)
    try:
        return cache.incr(key, amount)
    except ValueError:  # expired between add and incr
        cache.set(key, amount, timeout=window + 5)
        return amount


LIMITS = (("uploads", "TOKEN_UPLOADS_PER_MINUTE", 60), ("bytes", "TOKEN_BYTES_PER_DAY", 86400))
"""Each counter: its key's name, the setting that caps it, and its window in seconds."""


def charge(token_id: int, *, uploads: int = 0, nbytes: int = 0, now: float | None = None) -> int:
    """Count an ingest request of a token; 0 when within its limits, else the seconds to
    wait (the request is not counted then)."""
    conf = inspector_settings()
    now = time.time() if now is None else now
    for (name, setting, window), amount in zip(LIMITS, (uploads, nbytes), strict=True):
        if not amount:
            continue
        period = int(now // window)
        key = f"inspector:{name}:{token_id}:{period}"
        total, limit = _count(key, amount, window), conf[setting]
        if limit and total > limit:
            cache.decr(key, amount)
            return max(1, int((period + 1) * window - now))
    return 0
