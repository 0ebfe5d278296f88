"""Loop Inspector's Django project: settings, URLs and the ASGI entry point."""
