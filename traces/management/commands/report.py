"""Write a trace's post-mortem as a self-contained HTML file (and/or Markdown), no server."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from traces.cli import mapping_argument, price_table, read_mapping, read_trace
from traces.conf import app_css
from traces.core.export_html import render_export
from traces.core.export_md import render_markdown
from traces.core.postmortem import build_postmortem
from traces.core.report import build_report


class Command(BaseCommand):
    help = "Write the post-mortem of a trace file as HTML (--html OUT) and/or Markdown (--md OUT)."
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--html", type=Path, default=None, help="write the HTML here")
        parser.add_argument("--md", type=Path, default=None, help="write the Markdown here")
        parser.add_argument("--format", dest="format_name", default=None)
        mapping_argument(parser)
        parser.add_argument("--prices", type=Path, default=None, help="a price file (JSON)")

    def handle(self, *args, file, html, md, format_name, prices, mapping=None, **options):
        if html is None and md is None:
            raise CommandError("say where to write: --html OUT and/or --md OUT")
        trace = read_trace(file, format_name, read_mapping(mapping))
        report = build_report(trace, prices=price_table(prices))
        if html is not None:
            html.write_text(render_export(report, name=file.name, css=app_css()), encoding="utf-8")
            self.stdout.write(f"wrote {html}")
        if md is not None:
            md.write_text(render_markdown(build_postmortem(report, file.name)), encoding="utf-8")
            self.stdout.write(f"wrote {md}")
