"""Top-level URLs: the traces app owns every page and the JSON API."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("rules/", include("traces.rule_urls")),
    path("accounts/", include("traces.account_urls")),
    path("admin/", admin.site.urls),
    path("", include("traces.team_urls")),
    path("", include("traces.live.urls")),
    path("", include("traces.capture_urls")),
    path("", include("traces.urls")),
]
