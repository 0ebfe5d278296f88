"""The MCP server: Loop Inspector's tools for agents, on the official `mcp` SDK (MCPServer).

One server definition for both transports: `loop-inspector mcp` (stdio, the token from
the LOOP_INSPECTOR_TOKEN variable) and `/mcp` on the web server (streamable HTTP, the
token from each request's headers; see traces.mcp_server.http). Every tool call resolves
its principal again, as every request does, so a revoked token stops working at once;
local mode allows everything, as the JSON API does.

Each tool reads its inputs from a JSON schema the SDK derives from the annotations below,
answers Markdown plus the same facts as structured content, and reports refusals and bad
arguments as MCP errors (JSON-RPC errors the client raises), never as a result.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Annotated, Any, Literal

from channels.db import database_sync_to_async
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, INVALID_REQUEST, CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from traces.access.rules import (
    TOKEN_HEADER,
    Access,
    BadToken,
    Principal,
    local_mode,
    our_token,
    principal_from,
)
from traces.mcp_server import answers

TOKEN_VARIABLE = "LOOP_INSPECTOR_TOKEN"
"""Where `loop-inspector mcp` (stdio) takes the API token from in shared mode."""
NO_TOKEN = (
    "Loop Inspector runs in shared mode: send an API token with read scope "
    "('Authorization: Bearer li_…' over HTTP, LOOP_INSPECTOR_TOKEN for stdio)."
)
INSTRUCTIONS = (
    "Loop Inspector holds recorded LLM tool-call loops (agent sessions). To learn why the "
    "last run failed and what to change: list_traces(failed=true, sort='-date', limit=1), "
    "then get_postmortem(trace_id) for what went wrong and the fixes that would have "
    "saved the most; lint, get_call, what_if and compare go deeper; usage sums the spend."
)

SecretOf = Callable[[Context], str | None]
"""How a transport finds the API token of a tool call."""
BaseOf = Callable[[Context], str]
"""The site's address as the transport knows it, to link pages (empty: none, stdio)."""

TraceId = Annotated[str, Field(description="A trace id, as list_traces returns it.")]


def read_only() -> ToolAnnotations:
    """Every tool only reads: an agent may call it without asking its user."""
    return ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False)


def stdio_secret(ctx: Context) -> str | None:
    return os.environ.get(TOKEN_VARIABLE) or None


def header_secret(ctx: Context) -> str | None:
    headers = {key.lower(): value for key, value in (ctx.headers or {}).items()}
    return our_token(headers.get("authorization"), headers.get(TOKEN_HEADER.lower()))


def no_base(ctx: Context) -> str:
    return ""


def principal_for(secret: str | None) -> Principal:
    """The principal of a tool call, or the MCP error of a refused one (the JSON API's
    rule READ: any project's viewer through a `read` token; local mode allows all)."""
    try:
        who = principal_from(secret, None, None)
    except BadToken as exc:
        raise MCPError(INVALID_REQUEST, str(exc)) from None
    if not local_mode() and not who.allows(Access.READ, None):
        raise MCPError(INVALID_REQUEST, NO_TOKEN if who.token is None else "No read access.")
    return who


def _result(answer: answers.Answer) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=answer.text)], structured_content=answer.data
    )


class ArgumentCheck:
    """Server middleware: a tool call's arguments checked against the tool's own input
    schema before it runs, so bad arguments are an MCP error (INVALID_PARAMS naming the
    argument and why), as the issue asks, not a tool result the SDK would make of them."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self.validators: dict[str, Any] = {}

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method == "tools/call" and ctx.request_id is not None:
            params = ctx.params or {}
            validator = await self._validator(str(params.get("name", "")))
            if validator is not None:
                errors = sorted(
                    validator.iter_errors(params.get("arguments") or {}), key=lambda e: e.path
                )
                if errors:
                    raise MCPError(INVALID_PARAMS, "; ".join(_problem(e) for e in errors[:5]))
        return await call_next(ctx)

    async def _validator(self, name: str) -> Any:
        if not self.validators:
            from jsonschema import Draft202012Validator

            for tool in await self.server.list_tools():
                self.validators[tool.name] = Draft202012Validator(tool.input_schema)
        return self.validators.get(name)


def _problem(error: Any) -> str:
    where = ".".join(str(part) for part in error.path) or "arguments"
    return f"{where}: {error.message[:200]}"


def build_server(secret_of: SecretOf = stdio_secret, base_of: BaseOf = no_base) -> MCPServer:
    """The server with its tools; `secret_of` and `base_of` are the transport's."""
    from traces.cli import package_version

    server: MCPServer = MCPServer(
        "loop-inspector", instructions=INSTRUCTIONS, version=package_version(), log_level="WARNING"
    )
    server.middleware.append(ArgumentCheck(server))

    async def run(ctx: Context, answer: Callable[[Principal], answers.Answer]) -> CallToolResult:
        def work() -> answers.Answer:
            return answer(principal_for(secret_of(ctx)))

        try:
            return _result(await database_sync_to_async(work)())
        except (answers.NotFound, answers.BadArguments) as exc:
            raise MCPError(INVALID_PARAMS, str(exc)) from None

    @server.tool(annotations=read_only())
    async def list_traces(
        ctx: Context,
        q: Annotated[str, Field(description="Search names, ids, models, tools and text.")] = "",
        failed: Annotated[
            bool, Field(description="Only runs that did not finish their turn normally.")
        ] = False,
        outcome: Annotated[
            str,
            Field(description="finished, halted, api_error, max_tokens, interrupted, live."),
        ] = "",
        rule: Annotated[str, Field(description="Only traces where this lint rule fired.")] = "",
        severity: Annotated[str, Field(description="error, warning or info.")] = "",
        model: str = "",
        agent: str = "",
        project: Annotated[str, Field(description="The agent's working directory.")] = "",
        label: str = "",
        run_set: Annotated[str, Field(description="A run set's name or id.")] = "",
        date_from: Annotated[str, Field(description="Added on or after (YYYY-MM-DD).")] = "",
        date_to: Annotated[str, Field(description="Added on or before (YYYY-MM-DD).")] = "",
        cost_min: Annotated[float | None, Field(ge=0)] = None,
        cost_max: Annotated[float | None, Field(ge=0)] = None,
        calls_min: Annotated[int | None, Field(ge=0)] = None,
        calls_max: Annotated[int | None, Field(ge=0)] = None,
        errors: Annotated[bool, Field(description="Only traces with error results.")] = False,
        sort: Annotated[
            str, Field(description="date, cost, calls, findings or name; '-' for descending.")
        ] = "-date",
        limit: Annotated[int, Field(ge=1, le=answers.MAX_LIMIT)] = 20,
        page: Annotated[int, Field(ge=1)] = 1,
    ) -> CallToolResult:
        """The stored traces, newest first, with the trace list's search and filters."""
        filters = {
            "q": q,
            "outcome": outcome,
            "rule": rule,
            "severity": severity,
            "model": model,
            "agent": agent,
            "project": project,
            "label": label,
            "set": run_set,
            "from": date_from,
            "to": date_to,
            "cost_min": cost_min,
            "cost_max": cost_max,
            "calls_min": calls_min,
            "calls_max": calls_max,
            "errors": errors or None,
            "sort": sort,
            "page": page,
        }
        return await run(ctx, lambda who: answers.list_traces(who, filters, failed, limit))

    @server.tool(annotations=read_only())
    async def get_postmortem(ctx: Context, trace_id: TraceId) -> CallToolResult:
        """The post-mortem of a run as Markdown: how it ended, where it first went wrong,
        the calls around it, error results, findings, cost, and the fixes that would
        have saved the most."""
        base = base_of(ctx)
        return await run(ctx, lambda who: answers.get_postmortem(who, trace_id, base))

    @server.tool(annotations=read_only())
    async def get_call(
        ctx: Context,
        trace_id: TraceId,
        index: Annotated[int, Field(ge=1, description="The call's number in the trace.")],
    ) -> CallToolResult:
        """One model call: model, status, input tokens by bucket, output, cache, cost, the
        tool calls it asked for and the findings on it."""
        return await run(ctx, lambda who: answers.get_call(who, trace_id, index))

    @server.tool(annotations=read_only())
    async def lint(
        ctx: Context,
        trace_id: TraceId,
        severity: Annotated[
            Literal["", "error", "warning", "info"],
            Field(description="Only findings at least this severe."),
        ] = "",
    ) -> CallToolResult:
        """The loop lint findings of a trace (rule, severity, call, message)."""
        return await run(ctx, lambda who: answers.lint(who, trace_id, severity))

    @server.tool(annotations=read_only())
    async def what_if(
        ctx: Context,
        trace_id: TraceId,
        caps: Annotated[
            dict[str, int] | None,
            Field(description="Tool name -> the most tokens one of its results may keep."),
        ] = None,
        clear_after: Annotated[
            int | None, Field(ge=1, description="Clear tool results older than K requests.")
        ] = None,
        cache_lifetime: Literal["5m", "1h"] | None = None,
        drop_unused: Annotated[bool | None, Field(description="Drop unused tools.")] = None,
        batch: Annotated[bool | None, Field(description="Batch serial tool calls.")] = None,
    ) -> CallToolResult:
        """What each fix would have saved on this run (tokens, dollars, time), recomputed
        with these parameters as the trace page's What-if panel does."""
        return await run(
            ctx,
            lambda who: answers.what_if(
                who,
                trace_id,
                caps=caps,
                clear_after=clear_after,
                cache_lifetime=cache_lifetime,
                drop_unused=drop_unused,
                batch=batch,
            ),
        )

    @server.tool(annotations=read_only())
    async def compare(
        ctx: Context,
        a: Annotated[str, Field(description="The first trace's id (A).")],
        b: Annotated[str, Field(description="The second trace's id (B).")],
    ) -> CallToolResult:
        """Two runs side by side, as the compare page: outcome, calls, tokens, cost and
        findings, B minus A, and where their transcripts first differ."""
        return await run(ctx, lambda who: answers.compare(who, a, b))

    @server.tool(annotations=read_only())
    async def usage(
        ctx: Context,
        period: Literal["day", "week", "month"] = "day",
        since: Annotated[str | None, Field(description="First day (YYYY-MM-DD).")] = None,
        until: Annotated[str | None, Field(description="Last day (YYYY-MM-DD).")] = None,
    ) -> CallToolResult:
        """Spend and tokens per day, week or month of the stored traces."""
        return await run(ctx, lambda who: answers.usage(who, period, since, until))

    return server
