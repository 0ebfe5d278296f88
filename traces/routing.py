"""Websocket routes (live tail arrives with its own issue)."""

websocket_urlpatterns: list = []
