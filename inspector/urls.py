"""Top-level URLs: the traces app owns every page and the JSON API."""

from django.urls import include, path

urlpatterns = [
    path("rules/", include("traces.rule_urls")),
    path("", include("traces.live_urls")),
    path("", include("traces.capture_urls")),
    path("", include("traces.urls")),
]
