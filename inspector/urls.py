"""Top-level URLs: the traces app owns every page and the JSON API."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("rules/", include("traces.pages.rule_urls")),
    path("accounts/", include("traces.pages.account_urls")),
    path("admin/", admin.site.urls),
    path("", include("traces.pages.team_urls")),
    path("", include("traces.live.urls")),
    path("", include("traces.capture.urls")),
    path("", include("traces.urls")),
]
