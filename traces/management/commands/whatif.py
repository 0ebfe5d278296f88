"""Print what each fix would have saved on a trace file (core only, no database)."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
from django.core.management.base import BaseCommand, CommandError

from traces.cli import CliError, price_table, read_trace
from traces.core.analysis.whatif import basis_from_report, build_what_if, parse_caps, parse_params
from traces.core.analysis.whatif.params import LIFETIMES
from traces.core.analysis.whatif.table import render_table
from traces.core.outputs.report import build_report


class Command(BaseCommand):
    help = (
        "Re-price a trace under each fix: cap tool results, batch serial calls, run batches"
        " concurrently, cache the prefix, clear old results, drop unused tools."
    )
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--cap",
            action="append",
            default=[],
            metavar="TOOL=N",
            help="cap TOOL's results at N tokens (repeat for several tools; default: the"
            " oversized-result threshold for tools above it)",
        )
        parser.add_argument(
            "--clear-after",
            type=int,
            default=None,
            metavar="K",
            help="clear tool results older than K requests (default 3)",
        )
        parser.add_argument("--cache-lifetime", choices=sorted(LIFETIMES), default=None)
        parser.add_argument("--format", dest="format_name", default=None)
        parser.add_argument("--prices", type=Path, default=None, help="a price file (JSON)")
        parser.add_argument("--json", action="store_true", help="print the what_if section")

    def handle(
        self, *args, file, cap, clear_after, cache_lifetime, format_name, prices, json, **options
    ):
        if clear_after is not None and clear_after < 1:
            raise CommandError("--clear-after wants K >= 1")
        try:
            caps = parse_caps(cap)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        try:
            report = build_report(read_trace(file, format_name), prices=price_table(prices))
        except CliError as exc:
            raise CommandError(str(exc)) from exc
        values: dict[str, str] = {f"cap:{tool}": str(tokens) for tool, tokens in caps.items()}
        if clear_after is not None:
            values["clear_after"] = str(clear_after)
        if cache_lifetime is not None:
            values["cache_lifetime"] = cache_lifetime
        basis = basis_from_report(report)
        what_if = build_what_if(report, parse_params(basis, values), basis=basis)
        if json:
            sys.stdout.buffer.write(orjson.dumps(what_if, option=orjson.OPT_INDENT_2) + b"\n")
            sys.stdout.flush()
            return
        self.stdout.write(render_table(file.name, what_if), ending="")
