"""`loop-inspector usage daily --json` against `npx ccusage daily --json` on the same fake
home of Claude Code sessions: time, and whether the totals agree.

Builds `~/.claude/projects/<project>/<session>.jsonl` in a temporary folder from the
real Claude Code sessions of ../shared/corpus (SOURCES.md), copied `--copies` times with
every id varied (session, message, request, line uuids) and the copy's timestamps moved
by whole days, so no copy is a duplicate of another for either tool. Two changes make
the files read the same by both: a line without a `requestId` gets one from its message
id (ccusage deduplicates only by both, and would count every line of such a response),
and every line of a streamed response carries the response's final usage (Claude Code
writes partial output counts on the earlier lines; ccusage keeps a response's first
line, Loop Inspector its last). Subagents' files (`<session>/subagents/`) are left out:
`watch` does not read them (its Claude Code glob is `*/*.jsonl`), ccusage does. Old
modification times, so `watch` imports each file whole.

Then: one `watch` pass into a fresh SQLite database (timed, not part of the ratio: it
is the import, which ccusage never keeps), `usage daily --json` as a subprocess (the
console script, cold, like ccusage), and ccusage installed from the npm registry into a
temporary folder (`--offline`: its bundled price table), each `--repeat` times, in UTC.
Prints the median times, the ratio, and the totals of both: tokens must agree exactly;
dollars differ by the two price tables, and the difference is printed. Without npm the
ccusage half is skipped with a line saying so.

    PYTHONPYCACHEPREFIX=/tmp/pycache .venv/bin/python bench/usage.py [--copies 80]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / "pycache"))
CORPUS = ROOT.parent / "shared" / "corpus" / "claude_code_jsonl"
CCUSAGE = "ccusage@17"
TOKENS = ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens")
OURS = {"inputTokens": "input_tokens", "outputTokens": "output_tokens",
        "cacheCreationTokens": "cache_write_tokens",
        "cacheReadTokens": "cache_read_tokens"}  # fmt: skip


def _final_usage(lines: list[str]) -> dict[str, dict]:
    """Each streamed response's usage as its last line reports it (SOURCES.md: the earlier
    lines carry partial output counts)."""
    final: dict[str, dict] = {}
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        message = record.get("message") if isinstance(record, dict) else None
        if isinstance(message, dict) and isinstance(message.get("usage"), dict):
            final[str(message.get("id"))] = message["usage"]
    return final


def _vary(line: str, copy: int, final: dict[str, dict]) -> str:
    """One JSONL line of copy `copy`: ids suffixed, timestamps moved by `copy` days, and
    the response's final usage on every line of it."""
    try:
        record = json.loads(line)
    except ValueError:
        return line
    if not isinstance(record, dict):
        return line
    tag = f"-c{copy}"
    for key in ("uuid", "parentUuid", "sessionId", "logicalParentUuid", "leafUuid"):
        if isinstance(record.get(key), str):
            record[key] += tag
    message = record.get("message")
    if isinstance(message, dict) and isinstance(message.get("id"), str):
        if not isinstance(record.get("requestId"), str):
            record["requestId"] = "req_" + message["id"]
        if isinstance(message.get("usage"), dict):
            message["usage"] = final.get(message["id"], message["usage"])
        message["id"] += tag
    if isinstance(record.get("requestId"), str):
        record["requestId"] += tag
    stamp = record.get("timestamp")
    if isinstance(stamp, str) and stamp[:4].isdigit():
        moved = datetime.fromisoformat(stamp.replace("Z", "+00:00")) - timedelta(days=copy % 60)
        record["timestamp"] = moved.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return json.dumps(record, ensure_ascii=False)


def build_home(home: Path, copies: int) -> int:
    """The fake home; returns the number of .jsonl files written. Subagents' files
    (`<session>/subagents/`) are left out: `watch` reads `<project>/<session>.jsonl` only."""
    sources = sorted(
        p for p in CORPUS.rglob("*.jsonl") if p.is_file() and "subagents" not in p.parts
    )
    written = 0
    old = time.time() - 3 * 86_400
    for copy in range(copies):
        for source in sources:
            relative = source.relative_to(CORPUS)
            folder = relative.parts[0] if len(relative.parts) > 1 else "corpus"
            project = f"-home-dev-{folder}-{copy % 7}"
            target = home / ".claude" / "projects" / project / f"{source.stem}-c{copy}.jsonl"
            target.parent.mkdir(parents=True, exist_ok=True)
            lines = source.read_text(encoding="utf-8").splitlines()
            final = _final_usage(lines)
            varied = "\n".join(_vary(x, copy, final) for x in lines)
            target.write_text(varied + "\n", encoding="utf-8")
            os.utime(target, (old, old))
            written += 1
    return written


def timed(command: list[str], env: dict[str, str], repeat: int) -> tuple[float, str]:
    samples, out = [], ""
    for _ in range(repeat):
        started = time.perf_counter()
        result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        samples.append(time.perf_counter() - started)
        if result.returncode:
            raise SystemExit(f"{command[0]} failed: {result.stderr[-2000:]}")
        out = result.stdout
    return statistics.median(samples), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=80, help="copies of the 17 corpus files")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as folder:
        base = Path(folder)
        home = base / "home"
        files = build_home(home, args.copies)
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{base / 'usage.sqlite3'}",
               "INSPECTOR_DATA_DIR": str(base / "data"), "DJANGO_SETTINGS_MODULE":
               "inspector.settings", "PYTHONPATH": str(ROOT), "TZ": "UTC"}  # fmt: skip
        env.pop("REDIS_URL", None)
        ours = [sys.executable, "-m", "inspector.cli"]
        subprocess.run([*ours, "manage", "migrate", "-v0"], env=env, check=True)
        started = time.perf_counter()
        subprocess.run([*ours, "watch", "--once", "--home", str(home), "--store", "claude-code"],
                       env=env, check=True, capture_output=True)  # fmt: skip
        imported = time.perf_counter() - started
        print(f"fake home: {files:,} Claude Code files; watch pass (import): {imported:.1f} s")
        usage = [*ours, "usage", "daily", "--json", "--timezone", "UTC"]
        mine_s, mine_out = timed(usage, env, args.repeat)
        mine_all = json.loads(mine_out)
        mine = mine_all["totals"]
        print(f"loop-inspector usage daily --json: {mine_s * 1000:,.0f} ms")
        npm = shutil.which("npm")
        if npm is None:
            print("ccusage: skipped (npm is not installed), no ratio")
            return
        tools = base / "npm"
        install = subprocess.run([npm, "install", "--prefix", str(tools), "--no-audit",
                                  "--no-fund", CCUSAGE], capture_output=True, text=True,
                                 check=False)  # fmt: skip
        binary = tools / "node_modules" / ".bin" / "ccusage"
        if install.returncode or not binary.exists():
            print(f"ccusage: skipped (npm install failed: {install.stderr.strip()[-300:]})")
            return
        cc_env = {**env, "CLAUDE_CONFIG_DIR": str(home / ".claude"), "HOME": str(home)}
        cc_s, cc_out = timed([str(binary), "daily", "--json", "--offline", "--timezone", "UTC"],
                             cc_env, args.repeat)  # fmt: skip
        theirs = json.loads(cc_out)["totals"]
        print(f"npx ccusage daily --json --offline:  {cc_s * 1000:,.0f} ms")
        print(f"ratio: ccusage takes {cc_s / mine_s:.1f}x the time of loop-inspector usage")
        agree = True
        for key in TOKENS:
            a, b = mine[OURS[key]], theirs[key]
            same = "agree" if a == b else f"DIFFER by {a - b:+,}"
            agree &= a == b
            print(f"  {key:20s} loop-inspector {a:>14,}  ccusage {b:>14,}  {same}")
        ours_usd, theirs_usd = mine["cost_usd"] or 0.0, theirs["totalCost"]
        gap = ours_usd - theirs_usd
        share = gap / theirs_usd * 100 if theirs_usd else 0.0
        print(f"  dollars: loop-inspector ${ours_usd:,.2f}, ccusage ${theirs_usd:,.2f}: "
              f"the price tables differ by ${gap:+,.2f} ({share:+.1f}%)")  # fmt: skip
        print("tokens agree exactly" if agree else "TOKENS DO NOT AGREE")
        print_models(mine_all, binary, cc_env)


def print_models(mine_all: dict, binary: Path, cc_env: dict[str, str]) -> None:
    """Where the two price tables differ: dollars per model, side by side (one untimed
    ccusage run with --breakdown). A model one table does not price shows there as $0."""
    out = subprocess.run([str(binary), "daily", "--json", "--offline", "--breakdown",
                          "--timezone", "UTC"], env=cc_env, capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    theirs: dict[str, float] = {}
    for day in json.loads(out).get("daily", []):
        for row in day.get("modelBreakdowns", []):
            theirs[row["modelName"]] = theirs.get(row["modelName"], 0.0) + row["cost"]
    ours = {row["model"]: row["cost_usd"] or 0.0 for row in mine_all["by_model"]}
    print("  dollars by model:")
    for model in sorted(set(ours) | set(theirs)):
        a, b = ours.get(model, 0.0), theirs.get(model, 0.0)
        print(f"    {model or '(none)':34s} loop-inspector ${a:>10,.2f}  ccusage ${b:>10,.2f}")


if __name__ == "__main__":
    main()
