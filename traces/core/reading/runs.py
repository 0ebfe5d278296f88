"""Split what a person uploads into runs: one trace per run of a run set.

A run set arrives as several files, a ZIP of them, or one Inspect AI eval log with many
samples. Each run must become its own trace whose stored file reads back as that run
alone, so:
- a ZIP that is not an Inspect archive yields each of its files (an `.eval` inside is
  split in turn);
- an Inspect `.eval` with several samples yields one small `.eval` per sample: the log's
  header member and that sample's member, their contents byte-identical to the
  originals (only the ZIP framing is new, written deterministically so the same sample
  always hashes the same);
- an Inspect `.json` log with several samples yields one log document per sample (the
  log's fields with `samples` holding that sample alone);
- anything else is one run as it is.
The uploaded originals are kept whole beside the set; each run's bytes carry a SHA-256
so a file uploaded twice into a set is recognised and stored once.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import PurePosixPath

import orjson

from traces.core.records import dataclass

from .containers import (
    HEADER_MEMBERS,
    SAMPLE_MEMBER,
    ZIP_MAGIC,
    Member,
    MemberError,
    _Budget,
    central_directory,
    member_bytes,
)
from .decompress import decompress
from .limits import DEFAULT_LIMITS, InputRejected, Limits

FIXED_ZIP_TIME = (2000, 1, 1, 0, 0, 0)
SKIPPED_MEMBERS = ("__MACOSX/", ".DS_Store")


@dataclass(frozen=True, slots=True)
class RunFile:
    """One run's bytes, the name it is shown under, and their SHA-256."""

    name: str
    filename: str
    data: bytes
    sha256: str


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A file or member that could not be split; the others still are."""

    name: str
    message: str


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def split_runs(
    files: Sequence[tuple[str, bytes]], limits: Limits = DEFAULT_LIMITS
) -> tuple[list[RunFile], list[Unreadable]]:
    """Every run in the uploaded files, in upload order, and what could not be opened."""
    runs: list[RunFile] = []
    problems: list[Unreadable] = []
    for filename, data in files:
        budget = _Budget(limits, source_bytes=len(data))
        try:
            found = list(_runs_of(filename, data, limits, budget, depth=0))
        except (InputRejected, MemberError) as exc:  # a refused file gives no run at all
            problems.append(Unreadable(filename, str(exc)))
            continue
        runs.extend(found)
    return runs, problems


def _runs_of(
    filename: str, data: bytes, limits: Limits, budget: _Budget, depth: int
) -> Iterator[RunFile]:
    head = data[:4]
    if head == ZIP_MAGIC and depth < 2:
        members = {m.name: m for m in central_directory(data)}
        if any(SAMPLE_MEMBER.match(name) for name in members) or any(
            name in members for name in HEADER_MEMBERS
        ):
            yield from _eval_samples(filename, data, members, limits, budget)
        else:
            yield from _zip_files(filename, data, members, limits, budget, depth)
        return
    if data[:1] in (b"{", b"\xef") and filename.lower().endswith(".json"):
        split = _json_log_samples(filename, data)
        if split is not None:
            yield from split
            return
    yield RunFile(PurePosixPath(filename).name or filename, filename, data, sha256(data))


def _zip_files(
    filename: str,
    data: bytes,
    members: dict[str, Member],
    limits: Limits,
    budget: _Budget,
    depth: int,
) -> Iterator[RunFile]:
    for name, member in members.items():
        if name.endswith("/") or any(part in name for part in SKIPPED_MEMBERS):
            continue
        content = member_bytes(data, member, budget, limits)
        if not content.strip():
            continue
        yield from _runs_of(name, content, limits, budget, depth + 1)


def _eval_samples(
    filename: str, data: bytes, members: dict[str, Member], limits: Limits, budget: _Budget
) -> Iterator[RunFile]:
    samples = sorted(
        (m for name, m in members.items() if SAMPLE_MEMBER.match(name)),
        key=lambda m: _sample_key(m.name),
    )
    if len(samples) < 2:
        yield RunFile(PurePosixPath(filename).name, filename, data, sha256(data))
        return
    headers = [
        (name, member_bytes(data, members[name], budget, limits))
        for name in HEADER_MEMBERS
        if name in members
    ]
    if ("header.json" in members) and len(headers) > 1:
        headers = headers[:1]  # header.json holds what the journal's start.json does
    stem = PurePosixPath(filename).name.removesuffix(".eval")
    for member in samples:
        content = member_bytes(data, member, budget, limits)
        match = SAMPLE_MEMBER.match(member.name)
        assert match is not None
        sample, epoch = match.group("id"), match.group("epoch")
        archive = _zip([*headers, (member.name, content)])
        yield RunFile(
            f"{stem} · sample {sample} epoch {epoch}",
            f"{stem}_sample-{sample}_epoch-{epoch}.eval",
            archive,
            sha256(archive),
        )


def _sample_key(name: str) -> tuple[int, int | str, int]:
    match = SAMPLE_MEMBER.match(name)
    assert match is not None
    sample, epoch = match.group("id"), int(match.group("epoch"))
    return (0, int(sample), epoch) if sample.isdigit() else (1, sample, epoch)


def _zip(members: list[tuple[str, bytes]]) -> bytes:
    """A deterministic ZIP (fixed times, fixed order): the same members give the same bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, content in members:
            info = zipfile.ZipInfo(name, date_time=FIXED_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            bundle.writestr(info, content)
    return buffer.getvalue()


def _json_log_samples(filename: str, data: bytes) -> list[RunFile] | None:
    """An Inspect `.json` log with several samples, one log document per sample."""
    try:
        log = orjson.loads(decompress(data, DEFAULT_LIMITS))
    except (orjson.JSONDecodeError, InputRejected):
        return None
    if not isinstance(log, dict) or "eval" not in log:
        return None
    samples = log.get("samples")
    if not isinstance(samples, list) or len(samples) < 2:
        return None
    stem = PurePosixPath(filename).name.removesuffix(".json")
    out = []
    for position, sample in enumerate(samples, start=1):
        label = sample.get("id", position) if isinstance(sample, dict) else position
        epoch = sample.get("epoch", 1) if isinstance(sample, dict) else 1
        document = orjson.dumps({**log, "samples": [sample]})
        out.append(
            RunFile(
                f"{stem} · sample {label} epoch {epoch}",
                f"{stem}_sample-{label}_epoch-{epoch}.json",
                document,
                sha256(document),
            )
        )
    return out
