"""A trace's labels, written: the one place label names are cleaned and created.

It is its own module because two callers write labels, ingest (labels given with an
upload) and the trace page's label form, and the form has no business with ingest.
"""

from __future__ import annotations

from collections.abc import Iterable

from traces import models
from traces.core.labels import clean_labels


def trace_set_labels(*, trace: models.Trace, labels: Iterable[str]) -> list[str]:
    """Make the trace's labels exactly these (cleaned); new label names are created."""
    names = clean_labels(labels)
    for name in names:
        models.Label.objects.get_or_create(name=name)
    trace.labels.set(models.Label.objects.filter(name__in=names))
    return names
