"""Every queue task, imported here so `manage.py run_huey` (it loads apps' tasks) knows them."""

from traces.jobs import ingest_upload_job, reanalyze_job, recover_stale_jobs_task
from traces.live.worker import refresh_live_report

__all__ = [
    "ingest_upload_job",
    "reanalyze_job",
    "recover_stale_jobs_task",
    "refresh_live_report",
]
