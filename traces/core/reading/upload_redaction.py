"""Redact a whole upload: decode it first, so compression cannot hide a credential.

`redact` reads text; an upload may be gzip-compressed or a ZIP archive (an Inspect `.eval`
log, a run set's files), whose bytes hold no readable key at all. So in redacting mode an
upload is decoded the way the readers decode it, within the same limits, then redacted:
- gzip is inflated (`decompress`, bomb limits and all) and the original kept is the
  decoded text with its credentials replaced (`x.jsonl.gz` is kept as `x.jsonl`);
- a ZIP has each member inflated within the archive's decompression budget (as
  `containers` reads them), redacted (a gzip or ZIP member in turn), and is written again
  with `zipfile` when any member changed. A member that cannot be read (encrypted, an
  unknown compression, damaged) cannot be redacted either: it is left out, so the archive
  is never kept verbatim with it, and counted as `unreadable ZIP member (dropped)`.
In local mode, and for projects that keep originals, nothing here runs: the original
stays byte-identical.
"""

from __future__ import annotations

import io
import zipfile
from collections import Counter

from .containers import ZIP_MAGIC, MemberError, _Budget, central_directory, member_bytes
from .decompress import GZIP_MAGIC, decompress
from .limits import DEFAULT_LIMITS, Limits
from .redact import Redacted, merge_fields, redact

ZIP_TIME = (2000, 1, 1, 0, 0, 0)
"""Rewritten members carry one fixed time: the same upload gives the same bytes (and
SHA-256), so a run set still recognises it when it comes again."""
DROPPED = "unreadable ZIP member (dropped)"
MAX_NESTING = 2
"""ZIPs inside ZIPs are opened this deep (a ZIP of `.eval` logs), as run sets split them."""
GZIP_SUFFIXES = (".gz", ".gzip")


def redact_upload(
    filename: str, data: bytes, limits: Limits = DEFAULT_LIMITS
) -> tuple[str, Redacted]:
    """The name and decoded, redacted content an upload is kept as (see the module
    docstring). Raises `InputRejected` where reading it would (a decompression bomb)."""
    return _redact(filename, data, limits, 0)


def _redact(filename: str, data: bytes, limits: Limits, depth: int) -> tuple[str, Redacted]:
    if data.startswith(GZIP_MAGIC):
        data = decompress(data, limits)
        for suffix in GZIP_SUFFIXES:
            if filename.lower().endswith(suffix) and len(filename) > len(suffix):
                filename = filename[: -len(suffix)]
                break
    if data.startswith(ZIP_MAGIC) and depth < MAX_NESTING:
        return filename, _redact_zip(data, limits, depth)
    return filename, redact(data)


def _redact_zip(data: bytes, limits: Limits, depth: int) -> Redacted:
    budget = _Budget(limits)
    members: dict[str, bytes] = {}
    counts: list[dict[str, int]] = []
    dropped: Counter[str] = Counter()
    changed = False
    for member in central_directory(data):
        try:
            content = member_bytes(data, member, budget, limits)
        except MemberError:
            dropped[DROPPED] += 1
            changed = True
            continue
        if member.name.endswith("/"):
            members[member.name] = b""
            continue
        name, result = _redact(member.name, content, limits, depth + 1)
        if name != member.name or result.data != content:
            changed = True
        members.pop(member.name, None)  # a repeated name: the last one is what is read
        members[name] = result.data
        counts.append(result.fields)
    fields = merge_fields(*counts, dropped)
    if not changed:
        return Redacted(data, fields)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, content in members.items():
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            bundle.writestr(info, content)
    return Redacted(buffer.getvalue(), fields)
