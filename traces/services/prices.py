"""Prices people set in the UI, per project: stored, audit-logged, and merged into the
price table of that project's ingests and `reanalyze` (over the library and the file)."""

from __future__ import annotations

from django.db import transaction

from traces import conf, models
from traces.access.rules import Principal
from traces.core.analysis.pricing import Price, PriceTable
from traces.services import team


def project_overrides(project: models.Project | int | None) -> dict[str, Price]:
    """The prices set for a project (or its id), by lower-cased model name."""
    if project is None:
        return {}
    project_id = project.pk if isinstance(project, models.Project) else project
    return {
        row.model.lower(): Price(
            input=row.input,
            output=row.output,
            cache_write=row.input if row.cache_write is None else row.cache_write,
            cache_read=row.input if row.cache_read is None else row.cache_read,
            cache_write_1h=row.cache_write_1h,
        )
        for row in models.ModelPrice.objects.filter(project_id=project_id)
    }


def price_table_for(project: models.Project | int | None) -> PriceTable:
    """The library, then the PRICES file, then the prices set in the project's UI (one
    query; a project or its id, so the live paths need not load the project)."""
    table = conf.price_table()
    overrides = project_overrides(project)
    if not overrides:
        return table
    return table.merged(overrides, "prices set in the project")


def price_set(
    *,
    who: Principal | str,
    project: models.Project,
    model: str,
    values: dict[str, float | None],
) -> models.ModelPrice:
    """Set (or change) the price of `model` in `project`; audit-logged."""
    with transaction.atomic():
        row, created = models.ModelPrice.objects.update_or_create(
            project=project, model=model.strip().lower()[:200], defaults=values
        )
        team.audit(
            who,
            "price.set" if created else "price.change",
            project=project,
            target=row.model,
            **{key: value for key, value in values.items() if value is not None},
        )
    return row


def price_delete(*, who: Principal | str, project: models.Project, model: str) -> bool:
    with transaction.atomic():
        deleted, _ = models.ModelPrice.objects.filter(project=project, model=model).delete()
        if deleted:
            team.audit(who, "price.delete", project=project, target=model)
    return bool(deleted)
