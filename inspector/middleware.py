"""WhiteNoise that also runs in async mode, so async views (the recording proxy, the
OTLP receiver) are not pushed onto a thread each by one sync-only middleware."""

from __future__ import annotations

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
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
