"""Run-set ingest: several files (a ZIP, an eval with many samples) stored as one trace per
run in a named set, each run or file whose bytes the set already holds skipped.

It exists apart from `traces.services.upload` (one trace) because a set adds its own work:
the split into runs, duplicates recognised by SHA-256, and the files kept as received;
each run is then stored by that same `trace_upload`. The set pages' reads are
`traces.selectors.sets`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from traces import models
from traces.conf import limits
from traces.core.reading.limits import InputRejected
from traces.core.reading.runs import split_runs
from traces.core.reading.upload_redaction import redact_upload
from traces.services.ingest import redacts
from traces.services.upload import Who, trace_upload
from traces.storage import originals


@dataclass(frozen=True)
class SetIngestResult:
    run_set: models.RunSet
    added: list[models.Trace]
    duplicates: list[str]
    """Names of runs (or whole files) already in the set, recognised by SHA-256."""
    rejected: list[tuple[str, str]]
    """(name, why) of files or runs that are not traces; the others are stored."""


def set_upload(
    *,
    name: str,
    files: Sequence[tuple[str, bytes]],
    who: Who = None,
    project: models.Project | None = None,
    format_name: str | None = None,
    labels: Sequence[str] = (),
) -> SetIngestResult:
    """Store each run of the files (several files, a ZIP, an eval with many samples) as
    its own trace in the set `name` (created if new), each by `trace_upload` (audited as
    one `trace.upload` when `who` is named). A run or file whose bytes are already in the
    set is not stored again."""
    set_name = " ".join(name.split())[:200]
    if not set_name:
        raise InputRejected("Name the run set.")
    project = project or models.Project.default()
    run_set, _ = models.RunSet.objects.get_or_create(project=project, name=set_name)
    duplicates: list[str] = []
    fresh: list[tuple[str, bytes]] = []
    for filename, data in files:
        digest = hashlib.sha256(data).hexdigest()
        if run_set.files.filter(sha256=digest).exists():
            duplicates.append(filename)
        else:
            fresh.append((filename, data))
    runs = []
    rejected: list[tuple[str, str]] = []
    for filename, data in fresh:
        found, unreadable = split_runs([(filename, data)], limits())
        rejected.extend((problem.name, problem.message) for problem in unreadable)
        if found and not (len(found) == 1 and found[0].data is data):
            digest = hashlib.sha256(data).hexdigest()  # of the upload: a repeat is recognised
            if redacts(project):  # kept decoded, with its members' credentials replaced
                filename, redacted = redact_upload(filename, data, limits())
                data = redacted.data
            _keep_set_file(run_set, filename, data, len(found), digest)  # before the split
        runs.extend(found)
    added: list[models.Trace] = []
    seen: set[str] = set()
    for run in runs:
        if run.sha256 in seen or run_set.runs.filter(source_sha256=run.sha256).exists():
            duplicates.append(run.name)
            continue
        seen.add(run.sha256)
        try:
            result = trace_upload(
                files=[(run.filename, run.data)],
                name=run.name,
                who=who,
                project=project,
                format_name=format_name,
                labels=labels,
                run_set=run_set,
            )
        except InputRejected as exc:
            rejected.append((run.name, str(exc)))
            continue
        added.append(result.trace)
    return SetIngestResult(run_set, added, duplicates, rejected)


def _keep_set_file(
    run_set: models.RunSet, filename: str, data: bytes, runs: int, sha256: str
) -> None:
    if run_set.files.filter(sha256=sha256).exists():
        return
    # Named by the set and the bytes' digest: a racing upload of the same file writes the
    # same object with the same bytes, and the unique constraint keeps one row.
    key = originals.set_file_put(run_set.pk, sha256, data)
    models.RunSetFile.objects.get_or_create(
        run_set=run_set,
        sha256=sha256,
        defaults={"filename": filename[:300], "raw_bytes": len(data), "key": key, "runs": runs},
    )
