"""Memory bound: the 199 KB gzip array (200 MB of `[0,0,…]`), the gzip bomb and the 3M-object
array are refused with peak RSS growth under 300 MB, measured in a process of their own.

Before issue 9 the gzip array took 10.2 GB and 172 s of CPU, and the bomb 2.4 GB.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

LIMIT_MB = 300

SCRIPT = """
import json, os, resource, sys, time
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
import django
django.setup()
from tests.hostile.cases import by_id
from traces.services import ingest
from traces.core.reading.limits import InputRejected
case = by_id()[sys.argv[1]]
data = case.data
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
try:
    ingest.ingest_prepare(files=[(case.filename, data)], name="m")
    answer = "accepted"
except InputRejected as exc:
    answer = str(exc)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"growth_mb": (after - before) / 1024, "seconds": time.perf_counter() - started, "answer": answer}))
"""


@pytest.mark.parametrize("case_id", ["gzip-array-199k", "gzip-bomb", "array-3M-objects"])
def test_hostile_documents_are_refused_within_the_memory_bound(case_id):
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, case_id],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["answer"] != "accepted"
    assert "refused" in result["answer"]
    assert result["growth_mb"] < LIMIT_MB, result
    assert result["seconds"] < 10, result
