"""CI smoke test of the package: build the wheel, install it without dev extras, serve, probe.

Proves that `pip install .` alone gives a working server (templates, static files,
migrations and data inside the package) and that the core commands run without Django:

    python3 scripts/wheel_smoke.py [--port N] [--keep]

The source is copied to a temporary folder first, so the build leaves nothing in the
checkout and cannot lean on files outside the package. Dependencies come from PyPI
through pip's cache. Exits non-zero, saying what failed, on the first problem.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = shutil.ignore_patterns(
    ".git",
    ".venv",
    "__pycache__",
    "*.egg-info",
    "build",
    "dist",
    "node_modules",
    ".pytest_cache",
    ".ruff_cache",
    "test-results",
    "db.sqlite3*",
    "test-db.sqlite3*",
)
NO_DJANGO = """
import sys
from inspector.cli import main
status = main(sys.argv[1:])
assert "django" not in sys.modules, "a core command set up Django"
sys.exit(status)
"""


def step(text: str) -> None:
    print(f"-- {text}", flush=True)


def run(*command: str | Path, cwd: Path | None = None, env: dict | None = None) -> str:
    result = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True
    )
    if result.returncode != 0:
        sys.exit(
            f"FAILED: {' '.join(map(str, command))} (exit {result.returncode})\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    return result.stdout


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fetch(url: str, data: bytes | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=data, method="POST" if data else "GET")
    if data:
        request.add_header("Content-Type", "application/x-ndjson")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def build_and_install(work: Path) -> Path:
    """The wheel built from a copy of the source, installed into a fresh venv; its bin/."""
    step("copying the source")
    source = work / "src"
    shutil.copytree(ROOT, source, ignore=SKIP)
    step("building the wheel")
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", work / "dist", source)
    wheels = sorted((work / "dist").glob("loop_inspector-*.whl"))
    if not wheels:
        sys.exit("FAILED: no wheel was built")
    step(f"installing {wheels[0].name} into a fresh venv (no dev extras)")
    run(sys.executable, "-m", "venv", work / "venv")
    bin_dir = work / "venv" / "bin"
    run(bin_dir / "python", "-m", "pip", "install", "--quiet", wheels[0])
    return bin_dir


def check_core_commands(bin_dir: Path, run_dir: Path, env: dict) -> Path:
    """analyze, lint and report from the installed script, without Django; the sample file."""
    sample = run_dir / "sample.jsonl"
    run(
        bin_dir / "python",
        "-c",
        "import sys; from traces.core.reading.sample import sample_bytes; "
        f"open({str(sample)!r}, 'wb').write(sample_bytes())",
        cwd=run_dir,
        env=env,
    )
    step("loop-inspector analyze / lint / report (no Django)")
    report = json.loads(run(bin_dir / "python", "-c", NO_DJANGO, "analyze", sample, "--json"))
    if report.get("totals", {}).get("calls") != 4:
        sys.exit(f"FAILED: analyze --json gave {report.get('totals')}")
    run(bin_dir / "python", "-c", NO_DJANGO, "lint", sample, cwd=run_dir, env=env)
    html = run_dir / "sample.html"
    run(bin_dir / "python", "-c", NO_DJANGO, "report", sample, "--html", html, env=env)
    page = html.read_text(encoding="utf-8")
    if "<style>" not in page or "--accent" not in page:
        sys.exit("FAILED: the HTML report does not carry the app's stylesheet")
    run(bin_dir / "loop-inspector", "--help", env=env)
    return sample


def check_server(bin_dir: Path, run_dir: Path, env: dict, port: int, sample: Path) -> None:
    step(f"loop-inspector serve on 127.0.0.1:{port}")
    log = (run_dir / "serve.log").open("wb")
    server = subprocess.Popen(
        [str(bin_dir / "loop-inspector"), "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=run_dir,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if fetch(base + "/")[0] == 200:
                    break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                log.flush()
                sys.exit(f"FAILED: the server did not answer /\n{_tail(run_dir / 'serve.log')}")
            time.sleep(0.3)
        status, body = fetch(base + "/api/traces?name=smoke", sample.read_bytes())
        if status != 201:
            sys.exit(f"FAILED: POST /api/traces answered {status}: {body[:500]!r}")
        created = json.loads(body)
        trace_id = created["id"]
        probes = [
            ("/", b"smoke"),
            (f"/traces/{trace_id}/", b"smoke"),
            (f"/api/traces/{trace_id}", b"loop-inspector/report/v1"),
            ("/rules/", b"dangling-tool-call"),
            ("/static/css/app.css", b"--accent"),
            ("/static/js/app.js", b""),
        ]
        failures = []
        for path, expected in probes:
            status, body = fetch(base + path)
            ok = status == 200 and expected in body
            print(f"   {status} {path}{'' if ok else '  <- FAILED'}", flush=True)
            if not ok:
                failures.append(path)
        if failures:
            sys.exit(f"FAILED: {', '.join(failures)}\n{_tail(run_dir / 'serve.log')}")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()


def _tail(path: Path) -> str:
    return path.read_text(errors="replace")[-3000:] if path.exists() else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="default: any free port")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    options = parser.parse_args()
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="loop-inspector-wheel-"))
    try:
        bin_dir = build_and_install(work)
        run_dir = work / "run"
        run_dir.mkdir()
        # The default experience: no database or Redis URL, settings from the package.
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "PYTHONPATH"}
        }
        sample = check_core_commands(bin_dir, run_dir, env)
        check_server(bin_dir, run_dir, env, options.port or free_port(), sample)
    finally:
        if options.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"wheel smoke test passed in {time.monotonic() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
