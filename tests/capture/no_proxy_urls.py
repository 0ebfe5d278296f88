"""A URL configuration without the proxy's routes (the fast path's route cache test)."""

urlpatterns: list = []
