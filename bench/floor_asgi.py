"""The smallest ASGI app daphne can serve: bench/proxy.py times it as the floor of any
request through daphne on this machine (no Django, no middleware, no database)."""

from __future__ import annotations


async def application(scope, receive, send):
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/plain")],
        }
    )
    await send({"type": "http.response.body", "body": b"ok"})
