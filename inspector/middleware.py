"""Middleware that stays on the event loop in async mode, so async views (the recording
proxy, the OTLP receiver) are not pushed onto a thread and back by each middleware:
WhiteNoise, and Django's own middleware whose hooks never block."""

from __future__ import annotations

from types import MappingProxyType

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from csp import middleware as csp_middleware
from django.conf import settings
from django.contrib.auth import middleware as auth
from django.contrib.messages import middleware as messages
from django.contrib.sessions import middleware as sessions
from django.core.handlers.asgi import ASGIHandler
from django.middleware import clickjacking, common, csrf, security
from whitenoise.middleware import WhiteNoiseMiddleware


class AsyncWhiteNoiseMiddleware(WhiteNoiseMiddleware):
    sync_capable = True
    async_capable = True

    def __init__(self, get_response=None, **kwargs):
        super().__init__(get_response, **kwargs)
        self._is_async = iscoroutinefunction(get_response)
        if self._is_async:
            markcoroutinefunction(self)

    def __call__(self, request):
        if self._is_async:
            return self._acall(request)
        return super().__call__(request)

    async def _acall(self, request):
        """Static files are served as WhiteNoise would (file reads off the loop); every
        other request goes on without leaving the event loop."""
        if self.autorefresh:
            static_file = await sync_to_async(self.find_file)(request.path_info)
        else:
            static_file = self.files.get(request.path_info)
        if static_file is not None:
            return await sync_to_async(self.serve)(static_file, request)
        return await self.get_response(request)


class InlineHooks:
    """Django's middleware mixin, in async mode, runs every `process_request` and
    `process_response` (and the view middleware's `process_view`) in a thread and back:
    about 16 thread hops per request through this project's stack, most of the recording
    proxy's added latency. These hooks never block (no database, no files: headers,
    cookies, lazy objects), so under daphne they run inline on the event loop. A hook
    that might write (`_blocks`) still goes to Django's thread. Sync mode is unchanged."""

    def __init__(self, get_response):
        super().__init__(get_response)
        if self.async_mode and hasattr(self, "process_view"):
            sync_view_hook = self.process_view

            async def process_view(request, view_func, view_args, view_kwargs):
                return sync_view_hook(request, view_func, view_args, view_kwargs)

            self.process_view = process_view

    def _blocks(self, request, response) -> bool:
        return False

    async def __acall__(self, request):
        response = None
        if hasattr(self, "process_request"):
            response = self.process_request(request)
        response = response or await self.get_response(request)
        if hasattr(self, "process_response"):
            if self._blocks(request, response):
                hook = sync_to_async(self.process_response, thread_sensitive=True)
                response = await hook(request, response)
            else:
                response = self.process_response(request, response)
        return response


class SecurityMiddleware(InlineHooks, security.SecurityMiddleware):
    pass


class SessionMiddleware(InlineHooks, sessions.SessionMiddleware):
    def _blocks(self, request, response) -> bool:
        """Saving the session writes to the database: only then leave the loop."""
        session = getattr(request, "session", None)
        return session is not None and (
            getattr(session, "modified", False) or settings.SESSION_SAVE_EVERY_REQUEST
        )


class CommonMiddleware(InlineHooks, common.CommonMiddleware):
    pass


class CsrfViewMiddleware(InlineHooks, csrf.CsrfViewMiddleware):
    pass


class AuthenticationMiddleware(InlineHooks, auth.AuthenticationMiddleware):
    pass


class MessageMiddleware(InlineHooks, messages.MessageMiddleware):
    pass


class XFrameOptionsMiddleware(InlineHooks, clickjacking.XFrameOptionsMiddleware):
    pass


class CSPMiddleware(InlineHooks, csp_middleware.CSPMiddleware):
    pass


INLINE = MappingProxyType(
    {
        "django.middleware.security.SecurityMiddleware": SecurityMiddleware,
        "django.contrib.sessions.middleware.SessionMiddleware": SessionMiddleware,
        "django.middleware.common.CommonMiddleware": CommonMiddleware,
        "django.middleware.csrf.CsrfViewMiddleware": CsrfViewMiddleware,
        "django.contrib.auth.middleware.AuthenticationMiddleware": AuthenticationMiddleware,
        "django.contrib.messages.middleware.MessageMiddleware": MessageMiddleware,
        "django.middleware.clickjacking.XFrameOptionsMiddleware": XFrameOptionsMiddleware,
        "csp.middleware.CSPMiddleware": CSPMiddleware,
    }
)
"""Django's classes and their inline twins. MIDDLEWARE keeps Django's own paths (the
deploy checks look for them); the ASGI handler loads the twins (`InlineASGIHandler`)."""


class InlineASGIHandler(ASGIHandler):
    """Django's ASGI handler with the MIDDLEWARE entries of `INLINE` swapped for their
    inline twins while the chain is built (once, at start-up)."""

    def load_middleware(self, is_async=False):
        listed = settings.MIDDLEWARE
        settings.MIDDLEWARE = [
            f"{INLINE[path].__module__}.{INLINE[path].__qualname__}" if path in INLINE else path
            for path in listed
        ]
        try:
            super().load_middleware(is_async=is_async)
        finally:
            settings.MIDDLEWARE = listed
