"""Labels on traces: what a person types ("baseline, prompt-v2") made into clean names."""

from __future__ import annotations

from collections.abc import Iterable

MAX_LABEL_CHARS = 60
MAX_LABELS = 20


def clean_labels(values: Iterable[str] | str) -> list[str]:
    """Comma-separated or listed labels, trimmed, inner spaces collapsed, duplicates and
    empties dropped, in the order given (at most MAX_LABELS of MAX_LABEL_CHARS each)."""
    if isinstance(values, str):
        values = [values]
    names: list[str] = []
    for value in values:
        for part in str(value).split(","):
            name = " ".join(part.split())[:MAX_LABEL_CHARS]
            if name and name not in names:
                names.append(name)
    return names[:MAX_LABELS]
