"""A live page's rows are built in the browser from the events' data (static/js/live_rows.js),
the first paint's by the template (_call_rows.html): the same call must give the same row.

A real daphne (pytest-django's live_server has no websockets) serves a page that watches
a trace from its first line; every call row reaches it as data. Once the trace is closed
(the last event), the page's rows are compared with the rows the server renders for the
same trace on a fresh load: the same cells, classes, links, titles, numbers and flags
(finding badges), attribute order and the blank text between cells aside, and the flash
that marks a row as new. Two logs: one written to be hostile (markup in every text the
row shows, a failed call, a call without usage, a rewritten history, figures in every
range the formats know), and a real Claude Code session with its subagent (the corpus).
"""

from __future__ import annotations

import json
import urllib.request

import orjson
import pytest

from tests.browser.conftest import CHROMIUM_ARGS, chromium_path
from tests.live.conftest import in_fresh_thread
from tests.live.servers import ROOT, daphne, free_port, migrate, server_env
from tests.live.test_held_messages import interleaved_lines
from tests.live.test_live_figures_browser import settled
from tests.live.test_live_figures_browser import texts as figure_texts
from traces.core import formatting

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

pytestmark = pytest.mark.browser

MODEL = "claude-sonnet-4-5"
HOSTILE = '<img src=x onerror="alert(1)"> & "quotes" \'too\''


def hostile_lines() -> list[bytes]:
    """Four calls: one asking for a tool named in markup, with usage in the millions over
    an hour; one without usage (an estimate) whose stop reason is markup; one that
    rewrites the history and fails (HTTP 529, markup in the error); and a side call of
    another loop by an unpriced model named in markup."""
    first = {"role": "user", "content": f"Find {HOSTILE}"}
    answer = [
        {"type": "text", "text": HOSTILE},
        {"type": "tool_use", "id": "toolu_1", "name": HOSTILE, "input": {"q": HOSTILE}},
    ]
    events: list[dict] = [
        {"type": "meta", "format": "loop-inspector/events/v1", "provider": "anthropic"},
        {"type": "request", "call_id": "c1", "ts": 1000.0, "body": body([first])},
        {
            "type": "response",
            "call_id": "c1",
            "ts": 4725.9,
            "body": reply(
                answer,
                "tool_use",
                usage={
                    "input_tokens": 1_125_000,
                    "output_tokens": 12_345,
                    "cache_read_input_tokens": 40_000,
                    "cache_creation_input_tokens": 7,
                },
            ),
        },
        {"type": "tool_start", "tool_call_id": "toolu_1", "name": HOSTILE, "ts": 4726.0},
        {"type": "tool_end", "tool_call_id": "toolu_1", "name": HOSTILE, "ts": 4727.0},
    ]
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": HOSTILE * 40}],
    }
    second = [first, {"role": "assistant", "content": answer}, result]
    events += [
        {"type": "request", "call_id": "c2", "ts": 4728.0, "body": body(second)},
        {
            "type": "response",
            "call_id": "c2",
            "ts": 4728.25,
            "body": reply([{"type": "text", "text": "done"}], HOSTILE[:50]),
        },
        {
            "type": "request",
            "call_id": "c3",
            "ts": 4729.0,
            "body": body([first, {"role": "user", "content": f"Start over {HOSTILE}"}]),
        },
        {
            "type": "response",
            "call_id": "c3",
            "ts": 4794.0,
            "status": 529,
            "body": {"type": "error", "error": {"type": "overloaded_error", "message": HOSTILE}},
        },
        {
            "type": "request",
            "call_id": "c4",
            "ts": 4800.0,
            "body": body([{"role": "user", "content": "Another question"}], model=HOSTILE),
        },
        {
            "type": "response",
            "call_id": "c4",
            "ts": 4800.5,
            "body": reply(
                [{"type": "text", "text": "ok"}],
                "end_turn",
                usage={"input_tokens": 9_999, "output_tokens": 10_000},
                model=HOSTILE,
            ),
        },
    ]
    return [orjson.dumps(event) for event in events]


def body(messages: list[dict], model: str = MODEL) -> dict:
    return {"model": model, "max_tokens": 512, "messages": messages}


def reply(content: list[dict], stop: str, usage: dict | None = None, model: str = MODEL) -> dict:
    message = {"id": "msg", "type": "message", "role": "assistant", "model": model}
    message |= {"content": content, "stop_reason": stop}
    return message | ({"usage": usage} if usage else {})


def ndjson(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def post(url: str, body: bytes = b"") -> dict:
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/x-ndjson"}
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read())


CANONICAL_ROWS = """() => {
  // Each call row as a canonical string: tags, attributes sorted, text merged, the blank
  // text between cells dropped, and the flash of a new row (`live-new`) left out.
  function canon(node) {
    if (node.nodeType === Node.TEXT_NODE) return JSON.stringify(node.textContent);
    const attributes = Array.from(node.attributes)
      .map((a) => {
        let value = a.value;
        if (a.name === "class") value = value.split(/\\s+/).filter((c) => c && c !== "live-new").join(" ");
        return a.name + "=" + JSON.stringify(value);
      })
      .sort();
    const children = Array.from(node.childNodes)
      .filter((child) => !(node.tagName === "TR" && child.nodeType === Node.TEXT_NODE && !child.textContent.trim()))
      .map(canon);
    return "<" + node.tagName.toLowerCase() + " " + attributes.join(" ") + ">" + children.join("") + "</>";
  }
  const rows = {};
  document.querySelectorAll("table.calls tbody tr").forEach((row) => {
    const copy = row.cloneNode(true);
    copy.normalize();
    rows[row.querySelector("td a").textContent] = canon(copy);
  });
  return rows;
}"""


@pytest.fixture
def server_setup(tmp_path):
    env = server_env(DATABASE_URL=f"sqlite:///{tmp_path / 'rows.sqlite3'}")
    migrate(env)
    return env, tmp_path / "daphne.log", free_port()


def test_a_live_row_is_the_row_the_server_renders(server_setup):
    in_fresh_thread(compare_rows, *server_setup)


def compare_rows(env, log_path, port) -> None:
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True
        )
        try:
            with daphne(env, log_path, port) as base:
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                formats_as_the_server_does(context.new_page())
                hostile = watch_and_compare(context, base, hostile_lines(), batch=3)
                assert len(hostile) == 4
                assert any("row-error" in row for row in hostile.values())
                assert any("estimated with tiktoken" in row for row in hostile.values())
                assert any("rewrite" in row for row in hostile.values())
                real = watch_and_compare(context, base, interleaved_lines(), batch=7)
                assert len(real) >= 10
                assert any("data-key=" in row for row in real.values())  # flags, by finding
                context.close()
        finally:
            browser.close()


def watch_and_compare(context, base: str, lines: list[bytes], batch: int) -> dict[str, str]:
    """Watch a new live trace from its first line as `lines` arrive `batch` at a time,
    close it, and compare the page's rows with a fresh load's; the rows compared."""
    page = context.new_page()
    page.set_default_timeout(30_000)
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.on("dialog", lambda dialog: (problems.append(dialog.message), dialog.dismiss()))
    trace = post(base + "/api/traces?live=1&name=rows")
    lines_url = f"{base}/api/traces/{trace['id']}/lines"
    post(f"{lines_url}?offset=0", ndjson(lines[:1]))  # no call yet: every row comes live
    page.goto(trace["url"])
    expect(page.locator(".live-connection")).to_have_text("following")
    assert page.locator("table.calls tbody tr").count() == 0
    for start in range(1, len(lines), batch):
        post(f"{lines_url}?offset={start}", ndjson(lines[start : start + batch]))
    post(f"{base}/api/traces/{trace['id']}/close")
    expect(page.locator(".live-badge")).to_have_text("closed")  # the last event is in
    # The rows outside the diagram's window are hidden when its redraw for the last event
    # comes back: compare once it has (read earlier, a loaded machine showed a stale row).
    settled(page)
    live_rows = page.evaluate(CANONICAL_ROWS)
    assert page.locator("table.calls tbody tr:not(.live-new)").count() == 0  # all built here

    fresh = context.new_page()
    fresh.goto(trace["url"])
    served_rows = fresh.evaluate(CANONICAL_ROWS)
    # A fresh load lists the calls of the diagram's window (the agent's own loop) and the
    # side calls; the live page keeps every call it was told of.
    assert served_rows and set(served_rows) <= set(live_rows)
    for index, row in served_rows.items():
        assert live_rows[index] == row, f"call {index}"
    # And the figures around them (cards, outcome, tokens, tool runs, what if, findings).
    assert figure_texts(page) == figure_texts(fresh)
    for shown in (page, fresh):  # trace text is shown as text, never as markup
        assert shown.locator("img[src='x']").count() == 0
    assert problems == []
    page.close()
    fresh.close()
    return served_rows


FIGURES = [
    0,
    7,
    999,
    9_999,
    10_000,
    12_250,
    12_345,
    999_999,
    1_000_000,
    1_125_000,
    2_375_000,
    8_804_000_000,
]
AMOUNTS = [None, 0, 1.2e-06, -1.2e-06, 2.5e-05, 0.00042, 0.0042, 0.0625, 0.1875, 0.123, 1, 1.125]
AMOUNTS += [1234.565, -0.5]
SECONDS = [None, 0, 0.0005, 0.25, 0.9995, 1, 2.25, 12.5, 59.99, 65, 3599.5, 3725.9, 90061]


def formats_as_the_server_does(page) -> None:
    """The script's number formats are traces/core/formatting's, ties included (Python
    rounds a value exactly halfway to even, JavaScript's toFixed up)."""
    page.goto("about:blank")
    page.add_script_tag(path=str(ROOT / "traces" / "static" / "js" / "live_rows.js"))
    shown = page.evaluate(
        """([figures, amounts, seconds]) => {
            const f = window.loopInspectorRows.format;
            return [figures.map(f.tokens), figures.map(f.intcomma), amounts.map(f.money),
                    seconds.map(f.duration)];
        }""",
        [FIGURES, AMOUNTS, SECONDS],
    )
    assert shown == [
        [formatting.tokens_compact(v) for v in FIGURES],
        [f"{v:,}" for v in FIGURES],
        [formatting.money(v) for v in AMOUNTS],
        [formatting.duration(v) for v in SECONDS],
    ]
    page.close()
