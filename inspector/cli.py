"""The `loop-inspector` console script: the core commands without Django, the rest through it.

`analyze`, `lint` and `report` run the pure core straight away (the same functions as
`manage.py analyze|lint|report`); `serve` migrates the database and runs daphne; `tail`,
`ingest`, `watch`, `usage`, `mcp`, `proxy` and `manage` hand their arguments to the
management commands of the same name.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from types import MappingProxyType

CORE_COMMANDS = ("analyze", "lint", "report")
"""Commands that run the pure core, no Django."""
DJANGO_COMMANDS = MappingProxyType(
    {
        "tail": "follow a JSONL log into a live trace (see `loop-inspector tail --help`)",
        "ingest": "store trace files and print their URLs (see `loop-inspector ingest --help`)",
        "record": "run an agent through the recording proxy (`loop-inspector record -- CMD`)",
        "watch": "import and follow every agent's sessions on this machine (`watch --help`)",
        "usage": "spend and tokens per day, week or month across stored traces (`usage --help`)",
        "mcp": "serve the MCP tools to an agent over stdio (see README, Ask from an agent)",
        "proxy": "`proxy --forward`: the HTTPS forward proxy for agents with fixed endpoints",
        "manage": "any manage.py command: reanalyze, load_sample, close_idle_traces, migrate…",
    }
)


class _Version(argparse.Action):
    """--version, looked up only when asked (reading package metadata takes ~20 ms)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from traces import cli

        parser.exit(message=f"loop-inspector {cli.package_version()}\n")


def _parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with `only` (a core command the process runs), that
    command's subparser alone: its options, help and errors are the same, and the other
    subparsers are not built (0.5% of a 200-call report's instructions, by callgrind)."""
    from traces import cli

    parser = argparse.ArgumentParser(
        prog="loop-inspector",
        description="Look inside LLM tool-call loops: analyse, lint and report trace files, "
        "or serve the web app.",
    )
    parser.add_argument(
        "--version", action=_Version, nargs=0, default=argparse.SUPPRESS, help="print the version"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    core = {
        "analyze": (cli.add_analyze_arguments, "summarise trace files (or print the JSON report)"),
        "lint": (
            cli.add_lint_arguments,
            "run the loop lint rules; exit 1 at the --fail-on threshold",
        ),
        "report": (
            cli.add_report_arguments,
            "write a post-mortem as self-contained HTML and/or Markdown",
        ),
    }
    for name, (add_arguments, text) in core.items():
        if only is None or only == name:
            add_arguments(sub.add_parser(name, help=text))
    if only is not None:
        return parser
    serve = sub.add_parser(
        "serve",
        help="migrate the database, then serve the web app (daphne)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="default: loopback only")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--sample", action="store_true", help="load the bundled sample trace")
    for name, text in DJANGO_COMMANDS.items():
        sub.add_parser(name, help=text, add_help=False)
    return parser


def _setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
    import django

    django.setup()


def serve(*, host: str, port: int, sample: bool) -> None:
    """`make serve` for an installed package: migrate, maybe load the sample, run daphne."""
    _setup_django()
    from daphne.cli import CommandLineInterface
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    if sample:
        call_command("load_sample")
    print(f"Loop Inspector on http://{host}:{port}/", flush=True)
    CommandLineInterface().run(["-b", host, "-p", str(port), "inspector.asgi:application"])


def main(argv: list[str] | None = None) -> int:
    """Run a command. Without `argv` (the console script, `python -m inspector.cli`) this is
    the process's entry point: a core command then ends the process as soon as its output
    is flushed (see `_exit_now`); with `argv` (tests, callers) it returns the status."""
    args = list(sys.argv[1:] if argv is None else argv)
    # The process's own command (not a caller's) running the core alone: see `_exit_now`.
    exits_hard = argv is None and bool(args) and args[0] in CORE_COMMANDS
    if args and args[0] in DJANGO_COMMANDS:
        _setup_django()
        from django.core.management import execute_from_command_line

        if args[0] == "manage":
            args.pop(0)
        execute_from_command_line(["loop-inspector", *args])
        return 0

    if exits_hard:
        # A short-lived process that ends without freeing: the cycle collector would only
        # walk the modules being imported and the trace being built, finding nothing.
        gc.disable()
    from traces import cli

    options = vars(_parser(args[0] if args and args[0] in CORE_COMMANDS else None).parse_args(args))
    command = options.pop("command")
    kept: list[object] | None = [] if exits_hard else None
    status = 0
    try:
        if command == "serve":
            serve(**options)
        elif command == "analyze":
            cli.analyze(**options)
        elif command == "lint":
            status = cli.lint(**options)
        elif command == "report":
            cli.report(**options, keep=kept)
    except cli.CliError as exc:
        print(f"loop-inspector {command}: {exc}", file=sys.stderr)
        status = 1
    if exits_hard:
        _exit_now(status)
    return status


def _exit_now(status: int) -> None:
    """End the process without freeing what the command built (the trace and its report:
    ~1 M small objects, 40 ms for 2,000 calls) nor tearing down every module: the output
    is written and flushed, and the operating system reclaims the memory at once."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # e.g. a closed pipe: exit the ordinary way, which reports it
        sys.exit(status)
    os._exit(status)


if __name__ == "__main__":
    sys.exit(main())
