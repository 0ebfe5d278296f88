"""What the analyze, lint and report commands share: reading trace files and price files."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from traces.core.ingest import analyze_bytes, analyze_files
from traces.core.limits import InputRejected
from traces.core.mapping import Mapping, load_mapping
from traces.core.model import Trace
from traces.core.pricing import PriceTable, bundled_table, load_overrides


def price_table(path: Path | None) -> PriceTable:
    """The bundled prices, overridden by a user price file when one is named."""
    table = bundled_table()
    if path is None:
        return table
    try:
        return table.merged(load_overrides(path.read_bytes()))
    except (OSError, ValueError) as exc:
        raise CommandError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from exc


def read_mapping(path: Path | None) -> Mapping | None:
    """The mapping file named by --mapping, validated, or a CommandError saying what is wrong."""
    if path is None:
        return None
    try:
        return load_mapping(path.read_bytes(), path.name)
    except (OSError, InputRejected) as exc:
        raise CommandError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from exc


def mapping_argument(parser) -> None:
    parser.add_argument(
        "--mapping",
        type=Path,
        default=None,
        help="read a log of your own with this mapping file (JSON/YAML, see docs/mapping.md)",
    )


def read_trace(path: Path, format_name: str | None = None, mapping: Mapping | None = None) -> Trace:
    """A trace file through the core, or a CommandError saying why it could not be read."""
    try:
        return analyze_bytes(
            path.read_bytes(), filename=path.name, format_name=format_name, mapping=mapping
        )
    except (OSError, InputRejected) as exc:
        raise CommandError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from exc


def read_traces(
    paths: list[Path], format_name: str | None = None, mapping: Mapping | None = None
) -> Trace:
    """Several files read as one trace (a session and its subagents' files)."""
    try:
        files = [(str(path), path.read_bytes()) for path in paths]
        return analyze_files(files, format_name=format_name, mapping=mapping)
    except (OSError, InputRejected) as exc:
        raise CommandError(str(getattr(exc, "strerror", None) or exc)) from exc
