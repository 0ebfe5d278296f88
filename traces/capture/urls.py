"""URLs of the captures: the recording proxy and the OTLP/HTTP receiver (traces, logs,
metrics)."""

from django.urls import path

from traces.capture import forwarded, otlp, proxy
from traces.capture.api import session_page, session_status

app_name = "capture"

urlpatterns = [
    path("proxy/anthropic/<path:path>", proxy.relay, {"vendor": "anthropic"}, name="anthropic"),
    path("proxy/openai/v1/<path:path>", proxy.relay, {"vendor": "openai"}, name="openai"),
    path("proxy/gemini/<path:path>", proxy.relay, {"vendor": "gemini"}, name="gemini"),
    path(
        "proxy/openrouter/api/v1/<path:path>",
        proxy.relay,
        {"vendor": "openrouter"},
        name="openrouter",
    ),
    path(
        "proxy/s/<str:session>/anthropic/<path:path>",
        proxy.relay,
        {"vendor": "anthropic"},
        name="session-anthropic",
    ),
    path(
        "proxy/s/<str:session>/openai/v1/<path:path>",
        proxy.relay,
        {"vendor": "openai"},
        name="session-openai",
    ),
    path(
        "proxy/s/<str:session>/gemini/<path:path>",
        proxy.relay,
        {"vendor": "gemini"},
        name="session-gemini",
    ),
    path(
        "proxy/s/<str:session>/openrouter/api/v1/<path:path>",
        proxy.relay,
        {"vendor": "openrouter"},
        name="session-openrouter",
    ),
    path("proxy/bedrock/<path:path>", proxy.relay, {"vendor": "bedrock"}, name="bedrock"),
    path(
        "proxy/s/<str:session>/bedrock/<path:path>",
        proxy.relay,
        {"vendor": "bedrock"},
        name="session-bedrock",
    ),
    path("proxy/s/<str:session>/", session_page, name="session-page"),
    path("api/captures/<str:session>", session_status, name="session-status"),
    path("api/forward/exchanges", forwarded.exchanges, name="forwarded"),
    path("proxy/<path:rest>", proxy.unknown_vendor, name="unknown"),
    path("v1/traces", otlp.receive, name="otlp"),
    path("api/otlp/v1/traces", otlp.receive, name="api-otlp"),
    path("v1/logs", otlp.receive_logs, name="otlp-logs"),
    path("api/otlp/v1/logs", otlp.receive_logs, name="api-otlp-logs"),
    path("v1/metrics", otlp.receive_metrics, name="otlp-metrics"),
    path("api/otlp/v1/metrics", otlp.receive_metrics, name="api-otlp-metrics"),
]
