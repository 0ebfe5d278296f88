"""URLs of the rule documentation pages."""

from django.urls import path

from traces.pages import rules as rule_views

app_name = "rules"

urlpatterns = [
    path("", rule_views.rule_list, name="list"),
    path("<slug:rule_id>/", rule_views.rule_detail, name="detail"),
]
