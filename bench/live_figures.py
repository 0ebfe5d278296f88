"""What the live page's figures cost the server: the "state" event's figures at each stored
report, and the diagram.json answer that now carries its window's tool-run rows.

On a long trace (2,000 calls by default, the chat transcript of bench/page.py, uploaded
through the real path), it prints, as median wall and CPU time of this process:

- `trace_figures` (traces/selectors/figures.py: the cards, outcome, token table, findings
  order and what-if figures a state event carries), against encoding the stored report
  once with orjson (what each report refresh pays to store it anyway), measured in the
  same run; and the state event's size with and without its figures;
- diagram.json as a live page fetches it after each state event (its window's heading and
  tool-run rows included), against the diagram alone (`diagram_context`, all the answer
  held before), in the same run.

    PYTHONPYCACHEPREFIX=/tmp/pycache .venv/bin/python bench/live_figures.py [--calls 2000]
        [--repeat 5]

PYTHONPYCACHEPREFIX keeps the bytecode of the run out of the checkout and the shared venv.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.page import median_time, transcript  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        os.environ["DATABASE_URL"] = f"sqlite:///{folder}/figures.sqlite3"
        os.environ.pop("REDIS_URL", None)
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        from django.http import QueryDict
        from django.test import Client

        from traces.live.events import state_payload
        from traces.pages.presenters import diagram_context
        from traces.selectors.figures import trace_figures
        from traces.selectors.traces import trace_get
        from traces.services.upload import trace_upload

        uploaded = trace_upload(files=[("bench.json", transcript(args.calls))], name="bench")
        trace = trace_get(trace_id=uploaded.trace.pk)
        report = trace.report
        client = Client(HTTP_HOST="127.0.0.1")
        path = f"/traces/{trace.pk}/diagram.json"
        client.get(path)  # warm: templates, caches

        encode = median_time(lambda: orjson.dumps(report), args.repeat)
        figures = median_time(lambda: trace_figures(trace), args.repeat)
        state = state_payload(trace)
        with_figures = len(orjson.dumps(state))
        without = len(orjson.dumps({k: v for k, v in state.items() if k != "figures"}))
        diagram = median_time(lambda: diagram_context(trace, QueryDict()), args.repeat)
        answer = median_time(lambda: client.get(path), args.repeat)
        rows = len(client.get(path).json()["tool_run_rows"])
    print(f"trace: {trace.calls_count} calls, {trace.tool_runs_count} tool runs")
    print(f"{'':44s} {'wall':>9s} {'CPU':>9s}")
    print(f"{'baseline: the stored report, orjson-encoded':44s} "
          f"{encode[0] * 1000:6.2f} ms {encode[1] * 1000:6.2f} ms")  # fmt: skip
    print(f"{'trace_figures (a state event figures)':44s} "
          f"{figures[0] * 1000:6.2f} ms {figures[1] * 1000:6.2f} ms "
          f"({figures[1] / max(encode[1], 1e-6):.2f}x baseline CPU)")  # fmt: skip
    print(f"state event: {without:,} bytes without its figures, {with_figures:,} with them "
          f"(the report: {len(orjson.dumps(report)):,} bytes)")  # fmt: skip
    print(f"{'baseline: the diagram alone (diagram_context)':44s} "
          f"{diagram[0] * 1000:6.2f} ms {diagram[1] * 1000:6.2f} ms")  # fmt: skip
    print(f"{f'diagram.json with its {rows} tool-run rows':44s} "
          f"{answer[0] * 1000:6.2f} ms {answer[1] * 1000:6.2f} ms "
          f"({answer[1] / max(diagram[1], 1e-6):.2f}x baseline CPU)")  # fmt: skip


if __name__ == "__main__":
    main()
