"""URLs of live traces (the HTTP side of live tail): filled in by the live-tail work."""

app_name = "live"

urlpatterns: list = []
