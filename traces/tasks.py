"""Every queue task, imported here so `manage.py run_huey` (it loads apps' tasks) knows them."""

from traces.capture.otlp_queue import (
    recover_exports_every_minute,
    recover_exports_task,
    store_otlp_exports,
)
from traces.live.idle import sweep_idle_every_minute, sweep_idle_task
from traces.live.worker import refresh_live_report
from traces.services.jobs import ingest_upload_job, reanalyze_job, recover_stale_jobs_task

__all__ = (
    "ingest_upload_job",
    "reanalyze_job",
    "recover_exports_every_minute",
    "recover_exports_task",
    "recover_stale_jobs_task",
    "refresh_live_report",
    "store_otlp_exports",
    "sweep_idle_every_minute",
    "sweep_idle_task",
)
