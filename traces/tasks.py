"""Every queue task, imported here so `manage.py run_huey` (it loads apps' tasks) knows them."""

from traces.jobs import ingest_upload_job, reanalyze_job
from traces.live.worker import refresh_live_report

__all__ = ["ingest_upload_job", "reanalyze_job", "refresh_live_report"]
