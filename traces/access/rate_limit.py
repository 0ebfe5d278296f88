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


def charge(token_id: int, *, uploads: int = 0, nbytes: int = 0, now: float | None = None) -> int:
    """Count an ingest request of a token; 0 when within its limits, else the seconds to
    wait (the request is not counted then)."""
    conf = inspector_settings()
    now = time.time() if now is None else now
    minute, day = int(now // 60), int(now // 86400)
    if uploads:
        limit = conf["TOKEN_UPLOADS_PER_MINUTE"]
        total = _count(f"inspector:uploads:{token_id}:{minute}", uploads, 60)
        if limit and total > limit:
            cache.decr(f"inspector:uploads:{token_id}:{minute}", uploads)
            return max(1, int((minute + 1) * 60 - now))
    if nbytes:
        limit = conf["TOKEN_BYTES_PER_DAY"]
        total = _count(f"inspector:bytes:{token_id}:{day}", nbytes, 86400)
        if limit and total > limit:
            cache.decr(f"inspector:bytes:{token_id}:{day}", nbytes)
            return max(1, int((day + 1) * 86400 - now))
    return 0
