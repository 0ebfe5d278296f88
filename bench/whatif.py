"""What the what-if section costs: report building with and without it, and one
recomputation (what the trace page's JSON endpoint does when a cap moves).

Uses bench/ingest.py's generated request log (a loop whose requests re-send the whole
transcript). Prints seconds and ratios measured in the same run: the `what_if` section and one
recomputation against the core's analysis (accounting, rules, report) of the same trace.

    .venv/bin/python bench/whatif.py [--calls 300] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def best(repeat: int, run) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times) if repeat < 3 else statistics.median(times)


def main() -> None:
    from ingest import make_log

    from traces.core.analysis.accounting import account
    from traces.core.analysis.ingest import analyze_bytes
    from traces.core.analysis.rules.registry import run_rules
    from traces.core.analysis.whatif import (
        basis_from_report,
        build_series,
        build_what_if,
        parse_params,
    )
    from traces.core.outputs import report as report_module

    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    trace = analyze_bytes(make_log(args.calls, 2048))
    accounting = account(trace)
    findings = run_rules(trace, accounting)
    analysis = best(
        args.repeat,
        lambda: report_module.build_report(trace, accounting=account(trace)),
    )
    with_what_if = best(
        args.repeat,
        lambda: report_module.build_report(trace, accounting=accounting, findings=findings),
    )
    report = report_module.build_report(trace, accounting=accounting, findings=findings)
    inputs = report["what_if"]["inputs"]
    section = best(args.repeat, lambda: build_what_if(report))

    def recompute() -> None:
        basis = basis_from_report(report)
        params = parse_params(basis, {"cap:tool_0": "200", "clear_after": "5"})
        build_what_if(report, params, basis=basis)
        build_series(basis, params)

    endpoint = best(args.repeat, recompute)
    print(f"calls {len(trace.calls)}, tool results {len(report['tool_runs'])}")
    print(f"accounting + rules + report    {analysis:8.3f} s")
    print(f"build_report (with what_if)    {with_what_if:8.3f} s")
    share = section / analysis
    print(f"what_if section alone          {section:8.3f} s  ({share:.0%} of the analysis)")
    ratio = endpoint / analysis
    print(f"recompute + series (endpoint)  {endpoint:8.3f} s  ({ratio:.2f}x the analysis)")
    print(f"unused tool entries in inputs  {len(inputs['unused_tools'])}")


if __name__ == "__main__":
    main()
