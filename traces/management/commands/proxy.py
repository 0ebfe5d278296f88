"""`loop-inspector proxy --forward`: the HTTPS forward proxy, running until interrupted.

For agents that cannot be pointed at a base URL and are started some other way than
`record --forward` (an IDE, a desktop app): point their HTTPS_PROXY at the address
printed and make them trust the local CA printed. The vendor hosts' calls are recorded
into the session; every other host is tunnelled untouched. The reverse proxy itself
needs no command: it is served at /proxy/ by `loop-inspector serve`.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from django.conf import settings
from django.core.management.base import CommandError

from traces.capture.forward_proxy import ForwardProxyUnavailable, forward_proxy
from traces.capture.proxy import SESSION_NAME
from traces.management.commands.record import Command as RecordCommand

DEFAULT_LISTEN_PORT = 8080


class Command(RecordCommand):
    help = (
        "Run the HTTPS forward proxy on 127.0.0.1 until interrupted: calls to the vendors' "
        "hosts are recorded, every other host is tunnelled untouched. "
        "Usage: proxy --forward [--listen-port 8080] [--server URL] [--session NAME] "
        "[--token li_…]"
    )

    def add_arguments(self, parser):
        parser.add_argument("--forward", action="store_true", help="the forward proxy")
        parser.add_argument("--server", default="", metavar="URL", help="a running server")
        parser.add_argument("--session", default="", help="the session (trace) name")
        parser.add_argument(
            "--port",
            type=int,
            default=0,
            help="without --server: the port of the local server to use or start (8000)",
        )
        parser.add_argument(
            "--listen-port",
            type=int,
            default=DEFAULT_LISTEN_PORT,
            help=f"the forward proxy's port on 127.0.0.1 (default {DEFAULT_LISTEN_PORT})",
        )
        parser.add_argument(
            "--one-hop",
            action="store_true",
            help="with --forward: send the vendors' calls straight to their upstream and record "
            "them after (faster; an unreachable upstream gets mitmproxy's own 502)",
        )
        parser.add_argument(
            "--token",
            default=os.environ.get("LOOP_INSPECTOR_TOKEN", ""),
            help="on a shared server: an API token of ingest scope, added to every recorded "
            "call (default: $LOOP_INSPECTOR_TOKEN)",
        )

    def handle(
        self, *args, server, session, port, listen_port, forward, token="", one_hop=False, **_
    ):
        if not forward:
            raise CommandError(
                "Say --forward: the reverse proxy needs no command (point base URLs at "
                "/proxy/anthropic or /proxy/openai/v1 of `loop-inspector serve`)."
            )
        session = session or datetime.now(UTC).strftime("forward-%Y%m%d-%H%M%S")
        if not SESSION_NAME.match(session):
            raise CommandError("A session name is 1-100 letters, digits, '.', '_', ':' or '-'.")
        with self._server(server, port, token) as base:
            try:
                with forward_proxy(
                    server=base,
                    session=session,
                    data_dir=settings.INSPECTOR_DATA_DIR,
                    port=listen_port,
                    token=token,
                    one_hop=one_hop,
                ) as proxy:
                    self.stdout.write(
                        f"forward proxy on {proxy.url}, recording session {session}: live "
                        f"page {base}/proxy/s/{session}/\n"
                        f"  HTTPS_PROXY={proxy.url}\n"
                        f"  NODE_EXTRA_CA_CERTS={proxy.ca_cert}\n"
                        f"  SSL_CERT_FILE={proxy.bundle}"
                        "  (also REQUESTS_CA_BUNDLE, AWS_CA_BUNDLE)\n"
                        "Ctrl-C stops it."
                    )
                    self.stdout.flush()
                    try:
                        code = proxy.process.wait()
                    except KeyboardInterrupt:
                        return
                    raise CommandError(f"mitmdump exited with status {code} (see {proxy.log})")
            except ForwardProxyUnavailable as exc:
                raise CommandError(str(exc)) from exc
