"""The core commands (analyze, lint, report): their arguments and runs, with no Django.

`manage.py analyze|lint|report` and the `loop-inspector` script both call these functions,
so there is one code path, and neither sets up Django for them: they only read files and
run the pure core, and setting up Django would cost more than the work itself on small files.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traces.core.gcpause import without_cycle_collection
from traces.core.reading.limits import InputRejected

if TYPE_CHECKING:  # the core itself is imported when a command runs
    from traces.core.analysis.pricing import PriceTable
    from traces.core.model import Trace
    from traces.core.reading.mapping import Mapping


class CliError(Exception):
    """A message for the user; the command exits with status 1 (a CommandError in manage.py)."""


def price_table(path: Path | None) -> PriceTable:
    """The `genai-prices` prices, overridden by a user price file when one is named."""
    from traces.core.analysis.pricing import library_table, load_overrides

    table = library_table()
    if path is None:
        return table
    try:
        return table.merged(load_overrides(path.read_bytes()), f"the price file {path}")
    except (OSError, ValueError) as exc:
        raise CliError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from exc


def read_mapping(path: Path | None) -> Mapping | None:
    """The mapping file named by --mapping, validated, or a CliError saying what is wrong."""
    if path is None:
        return None
    from traces.core.reading.mapping import load_mapping

    try:
        return load_mapping(path.read_bytes(), path.name)
    except (OSError, InputRejected) as exc:
        raise CliError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from exc


def mapping_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mapping",
        type=Path,
        default=None,
        help="read a log of your own with this mapping file (JSON/YAML, see docs/mapping.md)",
    )


def read_trace(path: Path, format_name: str | None = None, mapping: Mapping | None = None) -> Trace:
    """A trace file through the core, or a CliError saying why it could not be read."""
    from traces.core.analysis.ingest import analyze_bytes

    if path.is_dir():  # a session kept as a folder (OpenHands v1, OpenCode, Cline tasks)
        return read_traces([path], format_name, mapping)
    try:
        return analyze_bytes(
            path.read_bytes(), filename=path.name, format_name=format_name, mapping=mapping
        )
    except (OSError, InputRejected) as exc:
        raise CliError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from exc


def read_traces(
    paths: list[Path], format_name: str | None = None, mapping: Mapping | None = None
) -> Trace:
    """Several files read as one trace (a session and its subagents' files); a folder
    stands for the files below it."""
    from traces.core.analysis.ingest import analyze_files
    from traces.core.reading.folders import expand_folders

    try:
        files = expand_folders(paths)
        return analyze_files(files, format_name=format_name, mapping=mapping)
    except (OSError, ValueError, InputRejected) as exc:
        raise CliError(str(getattr(exc, "strerror", None) or exc)) from exc


def _app_css() -> str:
    """The app's stylesheet (exports carry it inline), read without setting up Django."""
    from traces.web.assets import app_css

    return app_css()


def _write_json(payload: Any) -> None:
    import orjson

    sys.stdout.flush()
    sys.stdout.buffer.write(orjson.dumps(payload, option=orjson.OPT_INDENT_2) + b"\n")
    sys.stdout.flush()


def _say(text: str, *, err: bool = False) -> None:
    stream = sys.stderr if err else sys.stdout
    stream.write(text if text.endswith("\n") else text + "\n")


# analyze ---------------------------------------------------------------------------------


def add_analyze_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--format", dest="format_name", default=None)
    mapping_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the JSON report")
    parser.add_argument("--prices", type=Path, default=None, help="a price file (JSON)")
    parser.add_argument(
        "--together",
        action="store_true",
        help="read all files as one trace (a Claude Code session and its subagents)",
    )


@without_cycle_collection
def analyze(
    *,
    files: list[Path],
    format_name: str | None = None,
    json: bool = False,
    prices: Path | None = None,
    together: bool = False,
    mapping: Path | None = None,
    **_: Any,
) -> None:
    """Print each file's summary (or JSON report); CliError when any file could not be read."""
    from traces.core.outputs.report import build_report
    from traces.core.outputs.text_summary import render_summary

    table = price_table(prices)
    read_with = read_mapping(mapping)
    if together:
        report = build_report(read_traces(files, format_name, read_with), prices=table)
        if json:
            _write_json(report)
        else:
            _say(render_summary(" + ".join(p.name for p in files), report))
        return
    reports = []
    failures = 0
    for path in files:
        try:
            trace = read_trace(path, format_name, read_with)
        except CliError as exc:
            _say(str(exc), err=True)
            failures += 1
            continue
        report = build_report(trace, prices=table)
        if json:
            reports.append(report)
        else:
            _say(render_summary(path.name, report))
    if json and reports:
        _write_json(reports[0] if len(files) == 1 else reports)
    if failures:
        raise CliError(f"{failures} file(s) could not be analysed")


# lint ------------------------------------------------------------------------------------


def _split(values: list[str]) -> list[str]:
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def add_lint_arguments(parser: argparse.ArgumentParser, *, files_required: bool = True) -> None:
    parser.add_argument("files", nargs="+" if files_required else "*", type=Path)
    parser.add_argument(
        "--format",
        dest="output",
        choices=["text", "json", "sarif"],
        default="text",
        help="output format",
    )
    parser.add_argument("--trace-format", default=None, help="override format detection")
    mapping_argument(parser)
    parser.add_argument("--fail-on", choices=["error", "warning", "info", "never"], default="error")
    parser.add_argument("--select", action="append", default=[], help="only these rules")
    parser.add_argument("--ignore", action="append", default=[], help="skip these rules")
    parser.add_argument("--prices", type=Path, default=None, help="a price file (JSON)")


@without_cycle_collection
def lint(
    *,
    files: list[Path],
    output: str = "text",
    trace_format: str | None = None,
    fail_on: str = "error",
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    prices: Path | None = None,
    mapping: Path | None = None,
    sources: list[tuple[str, Callable[[], Trace]]] | None = None,
    title: str = "",
    **_: Any,
) -> int:
    """Print the findings; the exit status is 1 when one reaches `fail_on`, else 0.

    `sources` adds traces read by the caller (a stored run set: `manage.py lint --set`);
    over several files or a set the outcomes and the rules' firing counts follow.
    """
    from traces.core.analysis.accounting import account
    from traces.core.analysis.rules.base import SEVERITY_ORDER
    from traces.core.analysis.rules.registry import rules, run_rules

    known = {rule.id for rule in rules()}
    selected, ignored = _split(select or []), _split(ignore or [])
    unknown = sorted(set(selected + ignored) - known)
    if unknown:
        raise CliError(f"unknown rule(s): {', '.join(unknown)}")
    if not files and not sources:
        raise CliError("name trace files (or, with manage.py, a run set: --set NAME)")
    table = price_table(prices)
    read_with = read_mapping(mapping)
    every = [
        (str(path), lambda path=path: read_trace(path, trace_format, read_with)) for path in files
    ]
    runs = []
    for uri, read in every + list(sources or []):
        trace = read()
        findings = run_rules(trace, account(trace, table), select=selected or None, ignore=ignored)
        runs.append((uri, trace, findings))
    _print_findings(output, runs, title)
    if fail_on != "never":
        limit = SEVERITY_ORDER[fail_on]
        if any(SEVERITY_ORDER[f.severity] <= limit for _, _, found in runs for f in found):
            return 1
    return 0


def _print_findings(output: str, runs: list, title: str = "") -> None:
    if output == "sarif":
        from traces.core.outputs.sarif import to_sarif

        _write_json(
            to_sarif(runs, version=package_version(), rules_url="http://127.0.0.1:8000/rules")
        )
    elif output == "json":
        _write_json(
            [
                {"file": uri, "findings": [f.as_dict() for f in findings]}
                for uri, _, findings in runs
            ]
        )
    else:
        for uri, trace, findings in runs:
            lines = {call.index: call.line for call in trace.calls}
            for f in findings:
                line = lines.get(f.call or 0, 0)
                where = f"{uri}:{line}" if line else uri
                _say(f"{where}: {f.severity} [{f.rule}] {f.message}")
            _say(f"{uri}: {len(findings)} finding(s)")
        if len(runs) > 1 or title:
            from traces.core.outputs.lint_summary import LintedRun, aggregate, render_aggregate
            from traces.core.outputs.summary import outcome_of

            linted = [LintedRun(uri, outcome_of(trace).kind, found) for uri, trace, found in runs]
            _say("")
            sys.stdout.write(render_aggregate(aggregate(linted), title))
    sys.stdout.flush()


def package_version() -> str:
    """The installed version (SARIF names it; `loop-inspector --version` prints it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("loop-inspector")
    except PackageNotFoundError:
        return "0"


# report ----------------------------------------------------------------------------------


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path)
    parser.add_argument("--html", type=Path, default=None, help="write the HTML here")
    parser.add_argument("--md", type=Path, default=None, help="write the Markdown here")
    parser.add_argument("--format", dest="format_name", default=None)
    mapping_argument(parser)
    parser.add_argument("--prices", type=Path, default=None, help="a price file (JSON)")


@without_cycle_collection
def report(
    *,
    file: Path,
    html: Path | None = None,
    md: Path | None = None,
    format_name: str | None = None,
    prices: Path | None = None,
    mapping: Path | None = None,
    keep: list[object] | None = None,
    **_: Any,
) -> None:
    """Write the post-mortem as a self-contained HTML file and/or Markdown.

    `keep` receives the trace and its report, left alive for a caller that ends the
    process without freeing them (the console script).
    """
    from traces.core.outputs.report import build_report

    if html is None and md is None:
        raise CliError("say where to write: --html OUT and/or --md OUT")
    trace = read_trace(file, format_name, read_mapping(mapping))
    built = build_report(trace, prices=price_table(prices))
    if keep is not None:
        keep.extend((trace, built))
    if html is not None:
        from traces.core.outputs.export_html import render_export

        html.write_text(render_export(built, name=file.name, css=_app_css()), encoding="utf-8")
        _say(f"wrote {html}")
    if md is not None:
        from traces.core.outputs.export_md import render_markdown
        from traces.core.outputs.postmortem import build_postmortem

        md.write_text(render_markdown(build_postmortem(built, file.name)), encoding="utf-8")
        _say(f"wrote {md}")
