"""Every queue task, imported here so `manage.py run_huey` (it loads apps' tasks) knows them."""

from traces.live.worker import refresh_live_report

__all__ = ["refresh_live_report"]
