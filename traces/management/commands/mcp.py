"""Serve Loop Inspector's MCP tools over stdio: `loop-inspector mcp` (or `manage.py mcp`).

An agent (Claude Code, Codex, any MCP client) starts this command and talks JSON-RPC over
its stdin and stdout; nothing else may write to stdout, so logs go to stderr. In shared
mode the tools answer only with an API token of read scope in LOOP_INSPECTOR_TOKEN (never
an argument: other users of the machine could read it in the process list).
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from traces.mcp_server.server import build_server


class Command(BaseCommand):
    help = (
        "Serve the MCP tools (list_traces, get_postmortem, get_call, lint, what_if, compare,"
        " usage) over stdio; in shared mode set LOOP_INSPECTOR_TOKEN to an API token."
    )
    requires_system_checks: list = []

    def handle(self, *args, **options):
        build_server().run("stdio")
