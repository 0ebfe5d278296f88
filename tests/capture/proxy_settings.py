"""Settings of the daphne the capture tests start: short timeouts and limits to hit."""

from inspector.settings import *  # noqa: F403

INSPECTOR = {
    "PROXY_READ_TIMEOUT": 1.5,
    "PROXY_CONNECT_TIMEOUT": 2.0,
    "PROXY_MAX_REQUEST_BYTES": 1024 * 1024,
    "OTLP_MAX_BYTES": 4 * 1024 * 1024,
    "LIVE_SETTLE_SECONDS": 0.5,
}
INSPECTOR["OTLP_MAX_DECOMPRESSED_BYTES"] = 8 * 1024 * 1024
