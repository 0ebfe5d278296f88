"""Settings of the daphne the upload-progress browser test starts: a low background threshold."""

from inspector.settings import *  # noqa: F403

INSPECTOR = {"BACKGROUND_UPLOAD_BYTES": 256 * 1024}
