"""URLs of a shared instance's pages: tokens, projects, share links, deleting traces."""

from django.urls import path

from traces.pages import prices as price_views
from traces.pages import team as team_views

app_name = "team"

urlpatterns = [
    path("tokens/", team_views.tokens, name="tokens"),
    path("tokens/<int:token_id>/revoke", team_views.token_revoke, name="token-revoke"),
    path("projects/", team_views.projects, name="projects"),
    path("projects/<slug:project>/", team_views.project, name="project"),
    path("projects/<slug:project>/prices/", price_views.project_prices, name="prices"),
    path("traces/<uuid:trace_id>/share", team_views.share, name="share"),
    path(
        "traces/<uuid:trace_id>/share/<int:link_id>/revoke",
        team_views.share_revoke,
        name="share-revoke",
    ),
    path("traces/<uuid:trace_id>/delete", team_views.delete, name="delete"),
    path("s/<str:secret>", team_views.shared, name="shared"),
]
