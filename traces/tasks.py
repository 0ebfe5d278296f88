"""Every queue task, imported here so `manage.py run_huey` (it loads apps' tasks) knows them."""

from traces.live.idle import sweep_idle_every_minute, sweep_idle_task
from traces.live.worker import refresh_live_report
from traces.services.jobs import ingest_upload_job, reanalyze_job, recover_stale_jobs_task

__all__ = (
    "ingest_upload_job",
    "reanalyze_job",
    "recover_stale_jobs_task",
    "refresh_live_report",
    "sweep_idle_every_minute",
    "sweep_idle_task",
)
