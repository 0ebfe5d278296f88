"""What `genai-prices` costs `loop-inspector report --html` when no price lookup needs it.

Writes a 300-call session (every call reporting usage, one model) and a price file naming
that model, then runs, each as a fresh process taking turns --repeat times (best of each):
the report priced by the library, the report priced by the file alone, and the baseline
`python -c "import genai_prices"` measured in the same run. With the library imported on
first need, the file-priced report skips that import: the saving printed is what it cost.
`--before DIR` also runs both reports from another source tree (e.g. `git archive` of the
commit before the change, unpacked), in the same turns, for a before/after in one run.
Set PYTHONPYCACHEPREFIX to a cache folder so the processes run on cached bytecode, as an
installed package does. The price memo is off here (each run asks the library, as a first
run does); bench/peers.py times the report with it.

    PYTHONPYCACHEPREFIX=/tmp/pycache .venv/bin/python bench/lazy_prices.py [--repeat 5]
        [--before /tmp/before]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.core.long_session import make_session  # noqa: E402

PRICE_FILE = (
    b'{"claude-sonnet-4-5": {"input": 3, "output": 15, "cache_write": 3.75, "cache_read": 0.3}}'
)
PROBE = (
    "import sys\nfrom inspector.cli import main\nstatus = main(sys.argv[1:])\n"
    "print('genai_prices' in sys.modules, file=sys.stderr)\nsys.exit(status)\n"
)


def timed(command: list[str], cwd: Path = ROOT) -> tuple[float, str]:
    began = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=True)
    last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    return time.perf_counter() - began, last


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--before", type=Path, default=None, help="a source tree to compare")
    options = parser.parse_args()
    # The price memo off: "library prices" means the library imported, as on a first run.
    os.environ["LOOP_INSPECTOR_CACHE_DIR"] = ""
    print(f"bytecode cache: {os.environ.get('PYTHONPYCACHEPREFIX') or 'next to the sources'}")
    with tempfile.TemporaryDirectory(prefix="lazy-prices-") as tmp:
        work = Path(tmp)
        session = work / "session.jsonl"
        session.write_bytes(make_session(options.calls, parallel=False))
        prices = work / "prices.json"
        prices.write_bytes(PRICE_FILE)
        out = work / "report.html"
        python = sys.executable
        commands = {
            "import genai_prices (baseline)": [python, "-c", "import genai_prices"],
            "bare interpreter": [python, "-c", "pass"],
            "report --html, library prices": [
                python, "-c", PROBE, "report", str(session), "--html", str(out),
            ],
            "report --html, --prices file": [
                python, "-c", PROBE, "report", str(session), "--html", str(out),
                "--prices", str(prices),
            ],
        }  # fmt: skip
        where = dict.fromkeys(commands, ROOT)
        if options.before is not None:
            for name in ("report --html, library prices", "report --html, --prices file"):
                commands[f"before: {name[len('report --html, ') :]}"] = commands[name]
                where[f"before: {name[len('report --html, ') :]}"] = options.before
        best = dict.fromkeys(commands, float("inf"))
        loaded: dict[str, str] = {}
        for name, command in commands.items():  # warm the bytecode cache
            timed(command, where[name])
        for _ in range(options.repeat):
            for name, command in commands.items():
                seconds, last = timed(command, where[name])
                best[name] = min(best[name], seconds)
                loaded[name] = last
        print(f"{options.calls}-call session, best of {options.repeat}:")
        for name, seconds in best.items():
            flag = loaded[name] if name.startswith(("report", "before")) else ""
            note = f"  genai_prices loaded: {flag}" if flag else ""
            print(f"  {name:<32} {seconds * 1000:8.0f} ms{note}")
        library, file_only = (
            best["report --html, library prices"],
            best["report --html, --prices file"],
        )
        cost = best["import genai_prices (baseline)"] - best["bare interpreter"]
        print(f"  import genai_prices alone costs {cost * 1000:.0f} ms over a bare interpreter")
        print(
            f"  file-priced / library-priced report: {file_only / library:.2f}"
            f" (saves {(library - file_only) * 1000:.0f} ms)"
        )
        if options.before is not None:
            was = best["before: --prices file"]
            print(
                f"  file-priced report, after / before: {file_only / was:.2f}"
                f" ({was * 1000:.0f} -> {file_only * 1000:.0f} ms)"
            )


if __name__ == "__main__":
    main()
