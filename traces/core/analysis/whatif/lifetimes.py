"""Prompt-cache lifetime arithmetic shared by the caching scenario and `cache-expired`.

An entry lives for its lifetime after it was last used (read or written); a request that
comes later finds it gone and writes it again. The gap is measured start to start: the
cache is used when a request's prefix is processed, at its start.
"""

from __future__ import annotations

from .params import LIFETIMES


def expired(gap_s: float, lifetime: str) -> bool:
    """True when a gap is longer than the lifetime (a gap of exactly the lifetime is a hit)."""
    return gap_s > LIFETIMES[lifetime]


def gap_text(seconds: float) -> str:
    """A gap as people say it: `4 min 59 s`, `1 h 0 min 1 s`."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min {secs} s"
    if minutes:
        return f"{minutes} min {secs} s"
    return f"{seconds:.1f} s"
