"""The package's own static files read without Django: the stylesheet exports inline."""

from __future__ import annotations

from functools import cache
from pathlib import Path

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
"""Where the app's static files live inside the package (the app finder serves them)."""


@cache
def app_css() -> str:
    """The app's stylesheet, for documents that must carry their styles inline."""
    return (STATIC_DIR / "css" / "app.css").read_text(encoding="utf-8")
