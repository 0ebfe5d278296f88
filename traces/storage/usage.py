"""A trace's usage summary rows (`traces.core.outputs.usage_rows`), replaced whenever its
report is: at ingest, on a reanalysis and on each live report, in the same transaction
as the trace. The usage page and command read only these rows."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from traces import models
from traces.core.outputs.usage_rows import BUCKETS, KINDS, usage_rows
from traces.storage.row_writer import insert_instances


def store_usage_rows(trace: models.Trace, report: dict[str, Any]) -> None:
    """Replace the trace's slots, finding costs and savings with those of `report`."""
    slots, findings, savings = usage_models(trace, report)
    clear_usage_rows(trace)
    models.UsageSlot.objects.bulk_create(slots)
    models.UsageFinding.objects.bulk_create(findings)
    models.UsageSaving.objects.bulk_create(savings)


def store_new_usage_rows(reported: Sequence[tuple[models.Trace, dict[str, Any]]]) -> None:
    """The usage rows of many traces that have none yet (just created), in one insert per
    table (plain SQL, traces.storage.row_writer): the queued OTLP store reports a hundred
    new traces at once."""
    slots: list[models.UsageSlot] = []
    findings: list[models.UsageFinding] = []
    savings: list[models.UsageSaving] = []
    for trace, report in reported:
        more_slots, more_findings, more_savings = usage_models(trace, report)
        slots += more_slots
        findings += more_findings
        savings += more_savings
    insert_instances(models.UsageSlot, slots)
    insert_instances(models.UsageFinding, findings)
    insert_instances(models.UsageSaving, savings)


def usage_models(
    trace: models.Trace, report: dict[str, Any]
) -> tuple[list[models.UsageSlot], list[models.UsageFinding], list[models.UsageSaving]]:
    """The trace's slots, finding costs and savings from `report`, unsaved."""
    created = trace.created_at.timestamp() if trace.created_at else time.time()
    rows = usage_rows(report, fallback_at=created)
    slots = [
        models.UsageSlot(
            trace=trace,
            hour=slot.hour,
            model=slot.model,
            calls=slot.calls,
            priced_calls=slot.priced_calls,
            input_tokens=slot.input_tokens,
            output_tokens=slot.output_tokens,
            cache_read_tokens=slot.cache_read_tokens,
            cache_write_tokens=slot.cache_write_tokens,
            cost_usd=slot.cost_usd,
            **{f"{kind}_usd": slot.kinds_usd[kind] for kind in KINDS},
            **{f"{name}_usd": slot.buckets_usd[name] for name in BUCKETS},
        )
        for slot in rows.slots
    ]
    findings = [
        models.UsageFinding(
            trace=trace, hour=row.hour, rule=row.rule, count=row.count, cost_usd=row.cost_usd
        )
        for row in rows.findings
    ]
    savings = [
        models.UsageSaving(
            trace=trace,
            hour=row.hour,
            lever=row.lever,
            scenario=row.scenario[:60],
            usd_saved=row.usd_saved,
            tokens_saved=row.tokens_saved,
        )
        for row in rows.savings
    ]
    return slots, findings, savings


def clear_usage_rows(trace: models.Trace) -> None:
    trace.usage_slots.all().delete()
    trace.usage_findings.all().delete()
    trace.usage_savings.all().delete()
