"""Small traces do not pay for what they do not use: the tokenizer, jsonschema, PyYAML.

Loading tiktoken's encoding takes ~0.3 s and jsonschema ~60 ms, more than the whole
analysis of a few hundred exactly reported calls; each loads the first time it is needed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
