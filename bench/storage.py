"""Where blobs and originals should live: the database, a folder, or S3 (moto), measured.

On the 200-call log of bench/ingest.py, in one run:
- ingest (parse + rebuild + store) with the original in the folder storage, against
  the same ingest's original written as a row instead (the old way: one BinaryField);
- writing the trace's unique blobs (messages, prompts, tool lists, responses) with the
  one executemany of `BlobBatch.save`, against one object per blob through the storage
  API (the folder, then moto's S3 server on loopback when moto is installed);
- reading the blobs of the last call's request (what a call page needs): one query
  against one GET per blob.
Ratios are against the database in the same run.

    .venv/bin/python bench/storage.py [--calls 200] [--repeat 3] [--no-s3]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ingest import make_log  # noqa: E402


def show(label: str, seconds: float, note: str = "") -> None:
    print(f"{label:<44}{seconds * 1000:9.2f} ms  {note}".rstrip())


def median_time(action: Callable[[], object], repeat: int, reset: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        reset()
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


@contextlib.contextmanager
def moto_server(log_path: Path) -> Iterator[str | None]:
    """moto's S3 server on a free loopback port; None when moto is not installed."""
    try:
        import moto.server  # noqa: F401
    except ImportError:
        yield None
        return
    from tests.live.servers import _wait_for_port, free_port

    port = free_port()
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench"}
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        _wait_for_port(port, process, log_path)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-s3", action="store_true", help="skip the moto measurements")
    args = parser.parse_args()
    data = make_log(args.calls, 2048)
    with tempfile.TemporaryDirectory() as folder:
        os.environ["DATABASE_URL"] = f"sqlite:///{Path(folder) / 'bench.sqlite3'}"
        os.environ["INSPECTOR_DATA_DIR"] = str(Path(folder) / "data")
        os.environ.pop("REDIS_URL", None)
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
        os.environ.update(
            AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_EC2_METADATA_DISABLED="1"
        )
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        with moto_server(Path(folder) / "moto.log") as endpoint:
            run(data, args, None if args.no_s3 else endpoint)


def run(data: bytes, args: argparse.Namespace, endpoint: str | None) -> None:
    from django.core.files.base import ContentFile
    from django.core.files.storage import FileSystemStorage
    from django.db import connection

    from traces import models
    from traces.core.analysis.ingest import analyze_bytes
    from traces.core.reading import archive
    from traces.selectors.traces import blob_values, message_digests
    from traces.services.upload import trace_upload
    from traces.storage.rows import BlobBatch, call_row, tool_run_row

    repeat = args.repeat
    print(f"file: {args.calls} calls, {len(data) / 2**20:.1f} MiB")

    # 1. The original: an object in the folder (now) against a row (before).
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE bench_original (id INTEGER PRIMARY KEY, data BLOB)")
    compressed = archive.compress(data)
    store = FileSystemStorage(location=os.environ["INSPECTOR_DATA_DIR"], allow_overwrite=True)

    def as_row() -> None:
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO bench_original (data) VALUES (%s)", [compressed])

    def as_object() -> None:
        store.save("bench/original.zst", ContentFile(compressed))

    row = median_time(as_row, repeat, lambda: None)
    folder = median_time(as_object, repeat, lambda: None)
    ingest = median_time(
        lambda: trace_upload(files=[("bench.jsonl", data)], name="bench"),
        repeat,
        lambda: None,
    )
    show("ingest, the original in the folder", ingest, f"(median of {repeat})")
    show("  the original as a row (before)", row, f"{len(compressed) / 1024:.0f} KiB zstd")
    show(
        "  the original as a folder object (now)",
        folder,
        f"x{folder / row:.2f} the row; {100 * (folder - row) / ingest:+.2f}% of the ingest",
    )

    # 2. The blobs: one executemany against one object each.
    core = analyze_bytes(data)
    batch = BlobBatch()
    holder = models.Trace()
    for call in core.calls:
        call_row(holder, call, batch)
    for position, run in enumerate(core.tool_runs, start=1):
        tool_run_row(holder, position, run, batch)
    blobs = list(batch.pending.values())
    kib = sum(b.size for b in blobs) / 1024
    print(f"unique blobs of the trace: {len(blobs)} ({kib:.0f} KiB stored)")

    def clear_blobs() -> None:
        models.Blob.objects.all().delete()

    in_db = median_time(batch.save, repeat, clear_blobs)
    show("blobs into the database (one executemany)", in_db)

    def objects_into(target) -> Callable[[], None]:
        def write() -> None:
            for blob in blobs:
                target.save(f"blobs/{blob.digest[:2]}/{blob.digest}", ContentFile(blob.data))

        return write

    in_folder = median_time(objects_into(store), repeat, lambda: None)
    show("blobs as folder objects, one each", in_folder, f"x{in_folder / in_db:.1f}")

    # 3. What a call page reads: the last call's request.
    trace = models.Trace.objects.filter(name="bench").first()
    last = trace.calls.order_by("-index").first()
    digests = [*message_digests(trace=trace, call=last), last.system_digest]
    read_db = median_time(lambda: blob_values(digests), repeat, lambda: None)
    batch.save()
    wanted = sorted(set(digests))

    def read_from(target) -> Callable[[], None]:
        def read() -> None:
            for digest in wanted:
                with target.open(f"blobs/{digest[:2]}/{digest}", "rb") as stored:
                    stored.read()

        return read

    read_folder = median_time(read_from(store), repeat, lambda: None)
    show(f"last call's request ({len(wanted)} blobs), one query", read_db)
    show("  the same blobs from folder objects", read_folder, f"x{read_folder / read_db:.1f}")

    if endpoint is None:
        print("S3: skipped (moto not installed, or --no-s3)")
        return
    import boto3
    from storages.backends.s3 import S3Storage

    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(
        Bucket="bench-blobs"
    )
    bucket = S3Storage(
        bucket_name="bench-blobs", endpoint_url=endpoint, region_name="us-east-1",
        addressing_style="path", file_overwrite=True,
    )  # fmt: skip
    s3_original = median_time(
        lambda: bucket.save("bench/original.zst", ContentFile(compressed)), repeat, lambda: None
    )
    show("the original as an S3 object (moto)", s3_original, f"x{s3_original / row:.1f} the row")
    in_s3 = median_time(objects_into(bucket), 1, lambda: None)
    show("blobs as S3 objects, one each (moto, once)", in_s3, f"x{in_s3 / in_db:.0f}")
    read_s3 = median_time(read_from(bucket), 1, lambda: None)
    show("last call's request from S3 (moto, once)", read_s3, f"x{read_s3 / read_db:.0f}")


if __name__ == "__main__":
    main()
