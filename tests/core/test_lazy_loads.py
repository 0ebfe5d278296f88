"""Small traces do not pay for what they do not use: the tokenizer, jsonschema, PyYAML,
the price library.

Loading tiktoken's encoding takes ~0.3 s, jsonschema ~60 ms and genai-prices 0.6-1.8 s,
more than the whole analysis of a few hundred exactly reported calls; each loads the first
time it is needed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core.long_session import make_session
from traces.core.analysis import tokens

ROOT = Path(__file__).resolve().parent.parent.parent
HEAVY = ("tiktoken", "jsonschema", "yaml", "django")


def _modules_after(code: str) -> set[str]:
    script = f"import sys\n{code}\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return {name for name in result.stdout.strip().split(",") if name}


def test_an_exactly_reported_trace_is_reported_without_heavy_imports():
    """One tool call per turn, usage on every response: the differential split is exact."""
    loaded = _modules_after(
        "from tests.core.builders import log, pair, response, tool_result, tool_use, user\n"
        "from traces.core.analysis.ingest import analyze_bytes\n"
        "from traces.core.outputs.report import build_report\n"
        "history = [user('fix the bug')]\n"
        "lines = []\n"
        "for n in range(3):\n"
        "    call = tool_use(f't{n}', path=f'src/{n}.py')\n"
        "    lines.append(pair(history, response([call], 'tool_use', 100 + 50 * n)))\n"
        "    history = [*history, {'role': 'assistant', 'content': [call]},\n"
        "               {'role': 'user', 'content': [tool_result(f't{n}', 'ok')]}]\n"
        "report = build_report(analyze_bytes(log(*lines)))\n"
        "assert all(c['tokens_exact'] for c in report['calls']), report['calls']\n"
    )
    assert loaded == set()


def test_a_call_without_usage_loads_the_tokenizer_to_estimate():
    loaded = _modules_after(
        "import orjson\n"
        "from traces.core.analysis.ingest import analyze_bytes\n"
        "from traces.core.outputs.report import build_report\n"
        "pair = {'request': {'url': '/v1/messages', 'body': {'model': 'claude-sonnet-4-5',\n"
        "  'messages': [{'role': 'user', 'content': 'hello there'}]}},\n"
        "  'response': {'status_code': 200, 'body': {'type': 'message', 'role': 'assistant',\n"
        "  'content': [{'type': 'text', 'text': 'hi'}], 'stop_reason': 'end_turn'}}}\n"
        "report = build_report(analyze_bytes(orjson.dumps(pair) + b'\\n'))\n"
        "assert report['calls'][0]['tokens_exact'] is False\n"
    )
    assert "tiktoken" in loaded


def test_the_encoding_is_named_the_same_before_and_after_it_loads():
    named_before = tokens.encoding_name()
    tokens.encoding()
    assert tokens.encoding_name() == named_before


CLI_HEAVY = ("tiktoken", "plotly", "django", "jsonschema", "yaml", "zstandard")
"""zstandard too: only a zstd-compressed body or ZIP member needs it."""


def _modules_after_command(
    tmp_path: Path,
    *command: str,
    heavy: tuple[str, ...] = CLI_HEAVY,
    memo: Path | None = None,
) -> set[str]:
    """Heavy modules in `sys.modules` after `loop-inspector COMMAND` ran in a fresh process
    (with the price memo in `memo`; without, off as in every test)."""
    script = (
        "import sys\n"
        "from inspector.cli import main\n"
        f"status = main({list(command)!r})\n"
        "assert status in (0, 1), status\n"
        f"print(','.join(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)\n"
    )
    env = {**os.environ, "LOOP_INSPECTOR_CACHE_DIR": str(memo) if memo else ""}
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    last = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
    return {name for name in last.split(",") if name}


@pytest.fixture(scope="module")
def reported_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 300-call session, every call reporting its usage, one tool per response."""
    path = tmp_path_factory.mktemp("lazy") / "session.jsonl"
    path.write_bytes(make_session(300, parallel=False))
    return path


def test_report_html_of_an_exactly_reported_session_loads_no_tokenizer_plotly_or_django(
    reported_session, tmp_path
):
    out = tmp_path / "report.html"
    loaded = _modules_after_command(tmp_path, "report", str(reported_session), "--html", str(out))
    assert out.stat().st_size > 10_000  # the report was written
    assert b"<html" in out.read_bytes()[:2000].lower()
    assert loaded == set()


@pytest.mark.parametrize("command", ["analyze", "lint"])
def test_analyze_and_lint_of_an_exactly_reported_session_load_nothing_heavy(
    reported_session, tmp_path, command
):
    assert _modules_after_command(tmp_path, command, str(reported_session)) == set()


def test_parallel_results_split_an_exact_delta_by_estimates_so_the_tokenizer_loads(tmp_path):
    """The other side: two results in one message share one exact delta by their
    estimated sizes, which is the tokenizer's job (so the probe above can fail)."""
    path = tmp_path / "parallel.jsonl"
    path.write_bytes(make_session(30, parallel=True))
    assert "tiktoken" in _modules_after_command(tmp_path, "analyze", str(path))


PRICED_HEAVY = (*CLI_HEAVY, "genai_prices")


@pytest.fixture(scope="module")
def session_prices(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A price file naming the session's one model: no call needs the library."""
    path = tmp_path_factory.mktemp("lazy-prices") / "prices.json"
    path.write_bytes(b'{"claude-sonnet-4-5": {"input": 3, "output": 15}}')
    return path


def test_report_html_priced_by_a_price_file_never_imports_the_price_library(
    reported_session, session_prices, tmp_path
):
    out = tmp_path / "report.html"
    command = ("report", str(reported_session), "--html", str(out), "--prices", str(session_prices))
    loaded = _modules_after_command(tmp_path, *command, heavy=PRICED_HEAVY)
    assert "$" in out.read_text(encoding="utf-8")  # priced, by the file
    assert loaded == set()


@pytest.mark.parametrize("command", ["analyze", "lint"])
def test_analyze_and_lint_priced_by_a_price_file_never_import_the_price_library(
    reported_session, session_prices, tmp_path, command
):
    loaded = _modules_after_command(
        tmp_path, command, str(reported_session), "--prices", str(session_prices),
        heavy=PRICED_HEAVY,
    )  # fmt: skip
    assert loaded == set()


def test_a_model_the_price_file_does_not_name_imports_the_library_to_price_it(
    reported_session, tmp_path
):
    """The other side: the library is what prices claude-sonnet-4-5 without the file."""
    prices = tmp_path / "other.json"
    prices.write_bytes(b'{"acme-frontier-9": {"input": 4, "output": 8}}')
    command = ("analyze", str(reported_session), "--prices", str(prices))
    assert "genai_prices" in _modules_after_command(tmp_path, *command, heavy=PRICED_HEAVY)


START_UP = (*PRICED_HEAVY, "decimal", "email", "httpx2", "pydantic", "tempfile")
"""Also what the price library brings, the email parser a go-vcr Date header needs, and
tempfile (only writing the memo needs it)."""


def test_report_html_priced_from_the_memo_loads_neither_the_library_nor_what_it_brings(
    reported_session, tmp_path
):
    """A second report of the same model: the memo prices it, as the library would."""
    memo, first, second = tmp_path / "memo", tmp_path / "first.html", tmp_path / "second.html"
    command = ("report", str(reported_session), "--html")
    cold = _modules_after_command(tmp_path, *command, str(first), heavy=START_UP, memo=memo)
    assert {"genai_prices", "decimal", "httpx2", "pydantic", "tempfile"} <= cold  # asks, writes
    warm = _modules_after_command(tmp_path, *command, str(second), heavy=START_UP, memo=memo)
    assert warm == set()
    assert first.read_bytes() == second.read_bytes()


def test_a_go_vcr_cassettes_date_header_loads_the_email_parser(tmp_path):
    """The other side of go_vcr's lazy import: its Date header is parsed by email.utils."""
    from tests.core.test_go_vcr import _go_vcr, _interactions

    cassette = tmp_path / "chat.yaml"
    cassette.write_bytes(_go_vcr(_interactions()))
    assert "email" in _modules_after_command(tmp_path, "analyze", str(cassette), heavy=START_UP)
