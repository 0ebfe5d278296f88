"""Paths of many objects' pages from one `reverse()`: the paths differ only by the id.

Django's `reverse()` walks the URL patterns' reverse table and the active language on
every call: a list page's two links a row were a sixth of its rendering, and a run set's
charts (a link per run and chart) two-thirds of a 2,500-run set page. A view whose only
argument is an id (the `uuid` or `int` converter, which writes `str(id)`) is reversed
once with a marker id, and each object's path is the marker replaced by its id.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from typing import Any

from django.urls import reverse

MARKER = uuid.UUID(int=0x0123456789ABCDEF0123456789ABCDEF)
"""An id no object has, to find where the id sits in the reversed path."""


def path_maker(view: str) -> Callable[[Any], str]:
    """A function from an id to the path of `view` for that id, as `reverse(view,
    args=[id])` gives it (for a view whose one argument is a uuid id)."""
    head, tail = reverse(view, args=[MARKER]).split(str(MARKER))
    return lambda pk: f"{head}{pk}{tail}"


def paths_by_id(view: str, ids: Iterable[Any]) -> dict[Any, str]:
    """Each id's path of `view` (see `path_maker`)."""
    path = path_maker(view)
    return {pk: path(pk) for pk in ids}
