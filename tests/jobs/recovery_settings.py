"""Settings of the queue workers the recovery test kills: a job is stale after 2 s."""

from inspector.settings import *  # noqa: F403

INSPECTOR = {"BACKGROUND_UPLOAD_BYTES": 4096, "JOB_STALE_SECONDS": 2}
