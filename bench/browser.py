"""The trace page in a real browser at 100, 10,000 and 20,000 calls: size, time to
interactive, longest main-thread task, DOM nodes, and moving the diagram's window.

Each trace is one Claude Code session made by the generator bench/floor.py uses
(tests/core/long_session.py), ingested into a temporary SQLite database, and served by
daphne on a free loopback port; Chromium (/usr/bin/chromium when present) opens its
page through Playwright, with a `longtask` PerformanceObserver injected before any of
the page's scripts run (`add_init_script`). Per size it prints

- the page's HTML size (the navigation's decoded body);
- DOM interactive, the load event, and "interactive": the first idle callback after
  the load event (the deferred scripts and the charts' first drawing are done);
- the longest main-thread task up to interactive (and during the window moves);
- the DOM node count;
- the time to move the diagram's window: a click on next until the new heading is
  rendered (a frame after it changed), median and slowest of --moves, against the
  baseline measured in the same run, loading that window's page (what each move cost
  before the window moved in place);
- the server's CPU time for the move's answer (diagram.json?parts=window) against the
  whole answer the live page redraws from (diagram.json: figures and strip too), warm
  (the report and its diagram index cached, as after the page's visit) and cold, timed
  in this process with Django's test client after the browser is done.

Targets printed beside them: longest task < 200 ms, interactive < 1.5 s, window move
< 150 ms.

With --before PATH (another checkout of the project, e.g. `git worktree add /tmp/b
main`) the same traces are served a second time by a daphne running that checkout's code
on the same database, and each page is measured there too, the two alternating per size,
so a change is measured against its baseline on the same machine at the same load (the
browser figures swing with the load far more than a change moves them). With --loads N
each page is visited N times (alternating with the --before checkout's) and its load
figures are the medians; the first visit of each is cold (the server decodes the report).

    PYTHONPYCACHEPREFIX=/tmp/pycache .venv/bin/python bench/browser.py [--sizes 100,10000,20000]
    PYTHONPYCACHEPREFIX=/tmp/pycache .venv/bin/python bench/browser.py --loads 5 --before /tmp/b
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / "pycache"))

from ingest import setup_django  # noqa: E402  (bench/ingest.py: SQLite in a temp folder)

from tests.core.long_session import make_session  # noqa: E402

TARGET_LONGEST_TASK_MS = 200
TARGET_INTERACTIVE_MS = 1500
TARGET_MOVE_MS = 150
TIMEOUT_MS = 900_000
"""A 20,000-call page on a loaded machine can take minutes to load: wait, do not fail."""

LONGTASKS = """
window.__longtasks = [];
try {
  new PerformanceObserver(function (list) {
    list.getEntries().forEach(function (entry) {
      window.__longtasks.push([entry.startTime, entry.duration]);
    });
  }).observe({ type: "longtask", buffered: true });
} catch (e) { /* no longtask support: the figure reads 0 */ }
"""

INTERACTIVE = """() => new Promise(function (resolve) {
  function idle() {
    (window.requestIdleCallback || function (f) { setTimeout(f, 0); })(function () {
      var nav = performance.getEntriesByType("navigation")[0];
      resolve({
        interactive: performance.now(),
        dom_interactive: nav.domInteractive,
        load: nav.loadEventEnd,
        html_bytes: nav.decodedBodySize,
        nodes: document.getElementsByTagName("*").length
      });
    });
  }
  if (document.readyState === "complete") setTimeout(idle, 0);
  else window.addEventListener("load", function () { setTimeout(idle, 0); });
})"""

MOVE = """(id) => new Promise(function (resolve) {
  var heading = document.getElementById("diagram-window-heading");
  var before = heading.textContent;
  var started = performance.now();
  var watch = new MutationObserver(function () {
    if (heading.textContent === before) return;
    watch.disconnect();
    requestAnimationFrame(function () {
      setTimeout(function () { resolve(performance.now() - started); }, 0);
    });
  });
  watch.observe(heading, { childList: true, characterData: true, subtree: true });
  document.getElementById(id).click();
})"""

LONGEST_SINCE = """(since) => window.__longtasks
  .filter(function (t) { return t[0] + t[1] >= since; })
  .reduce(function (m, t) { return Math.max(m, t[1]); }, 0)"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def chromium() -> str | None:
    for path in ("/usr/bin/chromium", shutil.which("chromium") or ""):
        if path and os.path.exists(path):
            return path
    return None  # Playwright's own build


def ingest_traces(sizes: list[int]) -> list[tuple[int, str, float, float]]:
    """(calls, trace id, file MiB, ingest seconds) of one session per size."""
    from django.db import connection

    from traces.services.upload import trace_upload

    made = []
    for calls in sizes:
        data = make_session(calls)
        started = time.perf_counter()
        trace = trace_upload(files=[(f"session-{calls}.jsonl", data)], name=f"{calls} calls").trace
        made.append((calls, str(trace.pk), len(data) / 2**20, time.perf_counter() - started))
    connection.close()
    return made


def serve(env: dict[str, str], root: Path = ROOT) -> tuple[subprocess.Popen, str]:
    """daphne serving `root`'s code (this checkout, or the --before one) on a free port."""
    port = free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "daphne"), "-b", "127.0.0.1", "-p", str(port),
         "inspector.asgi:application"],
        env={**env, "PYTHONPATH": str(root)}, cwd=root,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90  # a busy machine starts daphne slowly
    while True:
        try:
            urllib.request.urlopen(base + "/rules/", timeout=5)
            return server, base
        except OSError:
            if time.monotonic() > deadline:
                server.terminate()
                raise
            time.sleep(0.2)


def first_load(browser, base: str, trace_id: str) -> dict[str, Any]:
    """One more visit of the page, closed after its first idle moment: its load figures."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(LONGTASKS)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{base}/traces/{trace_id}/#sequence", wait_until="commit")
    figures = page.evaluate(INTERACTIVE)
    figures["longest_task"] = page.evaluate(LONGEST_SINCE, 0)
    context.close()
    return figures


def medians(first: dict[str, Any], more: list[dict[str, Any]]) -> dict[str, Any]:
    """`first`'s load figures replaced by their medians over it and `more` (--loads)."""
    if not more:
        return first
    keys = ("interactive", "dom_interactive", "load", "longest_task")
    runs = [first, *more]
    return {**first, **{key: statistics.median(run[key] for run in runs) for key in keys}}


def measure(browser, base: str, trace_id: str, moves: int) -> dict[str, Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(LONGTASKS)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page_url = f"{base}/traces/{trace_id}/"
    page.goto(page_url + "#sequence", wait_until="commit")
    figures = page.evaluate(INTERACTIVE)  # waits for the load event, then an idle moment
    figures["longest_task"] = page.evaluate(LONGEST_SINCE, 0)
    move_times: list[float] = []
    moves_from = page.evaluate("performance.now()")
    for _ in range(moves):
        target = "window-next" if page.locator("#window-next").count() else "window-prev"
        if not page.locator(f"#{target}").count():
            break  # one window: nothing to move
        move_times.append(page.evaluate(MOVE, target))
    figures["moves"] = move_times
    figures["move_longest_task"] = page.evaluate(LONGEST_SINCE, moves_from)
    # The baseline: that move as it was, a load of the next window's page.
    reloads = []
    for _ in range(min(3, max(1, moves))):
        href = page.locator("#window-next, #window-prev").first.get_attribute("href")
        if not href:
            break
        started = time.perf_counter()
        page.goto(page_url + href, wait_until="load", timeout=TIMEOUT_MS)
        page.wait_for_selector("#diagram-window-heading")
        reloads.append((time.perf_counter() - started) * 1000)
    figures["reloads"] = reloads
    context.close()
    print(f"measured {trace_id}: {figures}", file=sys.stderr, flush=True)
    return figures


def server_times(trace_id: str, calls: int, repeat: int = 5) -> dict[str, float]:
    """CPU milliseconds of this process answering a window move (diagram.json?parts=window)
    against the whole answer (figures and strip too), with Django's test client: warm (the
    report and its diagram index cached, as after the page's visit) and cold (neither)."""
    from django.test import Client

    from traces.storage.report_cache import clear

    client = Client(HTTP_HOST="127.0.0.1")
    prefix = f"/traces/{trace_id}/diagram.json"
    starts = [1 + 60 * n for n in range(max(1, min(repeat, calls // 60)))]

    def cpu_ms(path: str) -> float:
        started = time.process_time()
        reply = client.get(path)
        assert reply.status_code == 200, (path, reply.status_code)
        return (time.process_time() - started) * 1000

    clear()
    cold_window = cpu_ms(f"{prefix}?start={starts[-1]}&parts=window")
    clear()
    cold_whole = cpu_ms(f"{prefix}?start={starts[-1]}")
    warm_window = statistics.median(cpu_ms(f"{prefix}?start={s}&parts=window") for s in starts)
    warm_whole = statistics.median(cpu_ms(f"{prefix}?start={s}") for s in starts[:3])
    return {
        "cold_window": cold_window,
        "cold_whole": cold_whole,
        "warm_window": warm_window,
        "warm_whole": warm_whole,
    }


def mark(value: float, target: float) -> str:
    return "ok" if value < target else "OVER"


def report(rows: list[tuple[int, float, float, dict[str, Any]]]) -> None:
    header = f"{'':34s}" + "".join(f"{f'{calls:,} calls':>18s}" for calls, *_ in rows)
    print(header)

    def line(label: str, cells: list[str]) -> None:
        print(f"{label:34s}" + "".join(f"{cell:>18s}" for cell in cells))

    line("file MiB / ingest s", [f"{mib:.1f} / {secs:.1f}" for _, mib, secs, _ in rows])
    line("page HTML", [f"{f['html_bytes'] / 1024:,.0f} KiB" for *_, f in rows])
    line("DOM nodes", [f"{f['nodes']:,}" for *_, f in rows])
    line("DOM interactive", [f"{f['dom_interactive']:,.0f} ms" for *_, f in rows])
    line("load event", [f"{f['load']:,.0f} ms" for *_, f in rows])
    line(
        f"interactive (target < {TARGET_INTERACTIVE_MS} ms)",
        [
            f"{f['interactive']:,.0f} ms {mark(f['interactive'], TARGET_INTERACTIVE_MS)}"
            for *_, f in rows
        ],
    )
    line(
        f"longest task (target < {TARGET_LONGEST_TASK_MS} ms)",
        [
            f"{f['longest_task']:,.0f} ms {mark(f['longest_task'], TARGET_LONGEST_TASK_MS)}"
            for *_, f in rows
        ],
    )
    medians = [statistics.median(f["moves"]) if f["moves"] else None for *_, f in rows]
    line(
        f"window move, median (< {TARGET_MOVE_MS} ms)",
        [
            f"{median:,.0f} ms {mark(median, TARGET_MOVE_MS)}" if median is not None else "-"
            for median in medians
        ],
    )
    line(
        "window move, slowest",
        [f"{max(f['moves']):,.0f} ms" if f["moves"] else "-" for *_, f in rows],
    )
    line("longest task while moving", [f"{f['move_longest_task']:,.0f} ms" for *_, f in rows])
    line(
        "baseline: that window's page load",
        [f"{statistics.median(f['reloads']):,.0f} ms" if f["reloads"] else "-" for *_, f in rows],
    )
    line(
        "move / page load",
        [
            f"{statistics.median(f['moves']) / statistics.median(f['reloads']):.3f}x"
            if f["moves"] and f["reloads"]
            else "-"
            for *_, f in rows
        ],
    )
    print("server CPU of the answer (warm: report and index cached, as after the page)")
    for key, label in (
        ("warm_window", "move: diagram.json?parts=window"),
        ("warm_whole", "baseline: diagram.json (whole)"),
        ("cold_window", "move, cold (report decoded)"),
        ("cold_whole", "whole, cold"),
    ):
        line(label, [f"{f[key]:,.1f} ms" for *_, f in rows])
    line("move / whole, warm", [f"{f['warm_window'] / f['warm_whole']:.3f}x" for *_, f in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,10000,20000")
    parser.add_argument("--moves", type=int, default=5)
    parser.add_argument(
        "--before", type=Path, help="another checkout to measure as the baseline, same run"
    )
    parser.add_argument(
        "--loads",
        type=int,
        default=1,
        help="visits per page (alternating with --before's): the load figures are medians",
    )
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        db_path = f"{folder}/browser.sqlite3"
        setup_django(db_path)
        made = ingest_traces(sizes)
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{db_path}"}
        env["INSPECTOR_DATA_DIR"] = str(Path(folder) / "data")
        env.pop("REDIS_URL", None)
        server, base = serve(env)
        before = serve(env, args.before.resolve()) if args.before else None
        rows, before_rows = [], []
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=chromium(),
                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
                )
                for calls, trace_id, mib, secs in made:
                    if before is not None:
                        figures = measure(browser, before[1], trace_id, args.moves)
                        before_rows.append((calls, mib, secs, figures))
                    rows.append((calls, mib, secs, measure(browser, base, trace_id, args.moves)))
                    more: dict[str, list[dict[str, Any]]] = {"after": [], "before": []}
                    for _ in range(args.loads - 1):  # alternating: the load swings alike
                        if before is not None:
                            more["before"].append(first_load(browser, before[1], trace_id))
                        more["after"].append(first_load(browser, base, trace_id))
                    rows[-1] = (*rows[-1][:3], medians(rows[-1][3], more["after"]))
                    if before is not None:
                        before_rows[-1] = (
                            *before_rows[-1][:3],
                            medians(before_rows[-1][3], more["before"]),
                        )
                browser.close()
        finally:
            for running in (server, before[0] if before else None):
                if running is not None:
                    running.terminate()
                    running.wait(timeout=10)
        for (calls, trace_id, _, _), (*_, figures) in zip(made, rows, strict=True):
            figures.update(server_times(trace_id, calls))
    print(f"Chromium {chromium() or '(Playwright build)'}, daphne on SQLite, 1280x900 viewport")
    if args.loads > 1:
        print(f"load figures (interactive, longest task): medians of {args.loads} visits")
    if before_rows:
        print(f"BEFORE ({args.before}; server CPU rows are this checkout's):")
        report(
            [
                (*row[:3], {**row[3], **after[3]} | row[3])
                for row, after in zip(before_rows, rows, strict=True)
            ]
        )
        print("AFTER (this checkout):")
    report(rows)


if __name__ == "__main__":
    main()
