"""aider's chat history: the Markdown file aider appends to in the repository it works on.

Where: `<repo>/.aider.chat.history.md` (aider's `--chat-history-file`). Read as text lines
(`Adapter.reads_text`: one `str` record per non-blank line; blank lines are the gaps
between line numbers). Checked against the two real files of ../shared/agents/aider_history
(the aider author's own 4 MB history, aider 0.47-0.50, and a 0.86 history with no reply).

The shape, as aider writes it (`io.py`: every line it writes ends with two spaces, a
Markdown hard break, except the plain reply text):

- `# aider chat started at 2024-08-05 19:33:32`: a run of aider starts (local time, no
  zone: kept as written in `extra["run"]` and the loop label; calls get no time from it,
  as a run's start is not its calls'). Each run is its own loop
  (`loop_key` "run-N", labelled with its start), with a transcript of its own. Lines
  before the first header (a history whose start was cut) are run 0.
- `> ` lines: aider's own output: the command line, `Aider v…`, `Model:` / `Main model:`
  / `Models: X with … edit format, weak model Y` (the model of the run's calls, until
  the next such line), repo-map, `Applied edit to F`, `Commit abc123 msg`, lint and test
  output, `^C` interrupts. They are not part of what the model was sent, so they are not
  in the transcript; `Applied edit to` and `Commit` lines after a reply are kept on that
  reply's call (`extra["applied_edits"]`, `extra["commits"]`).
- `#### ` lines: what the user typed; consecutive ones are one input. An input is a user
  message of the run's transcript, except aider's own commands (`/add`, `/run`, `/diff`,
  `/undo`, `/ex`…), which send nothing; `/ask`, `/code`, `/architect` and `/help` send
  their text; `/clear` and `/reset` empty the chat, so the next request starts a new
  transcript (`extra["chat_cleared"]`).
- Any other line: the assistant's reply, plain Markdown with its SEARCH/REPLACE fences
  kept as text (aider's edits are text, not tool calls: the trace has no tool runs).
- `> Tokens: 5,244 sent, 604 received. Cost: $0.02 request, $0.02 session.` (also
  `2.3k sent`, `… cache write`, `… cache hit` / `… cached`): printed after each
  main-model reply; it is the one record of a model call, so each such line is one call
  (weak-model commit messages and summaries print none and are not calls). Its request
  is the run's transcript up to the reply (a `TranscriptView`, linear on long runs), its
  response the reply. The figures are aider's rounded ones ("2.3k"): they are the usage
  (`sent` less the cache figures is the uncached input), and the call is marked
  `tokens_estimated`; the figures as written and the costs aider printed are in
  `extra["aider_tokens"]`, `extra["cost_usd"]` and `extra["session_cost_usd"]`.
  The system prompt, repo map and file contents aider sent are not in the history.
- A reply with no `Tokens` line (interrupted, or an aider that printed none) is no
  call; it stays in the transcript as an assistant message, since aider keeps it.

No per-message times are written, so calls have none. The first call carries
`extra["agent_session"] = {"agent": "aider"}` (the history names no session id nor the
project directory). A history with runs but no `Tokens` line (every run interrupted, or
only commands) makes no call and says so (`no_call_notice`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from traces.core.records import dataclass, field

from ...model import Exchange, LineError, Usage
from ..dialects.openai_chat import normalize_message
from ..records import Record
from ..transcript import TranscriptView
from ._index import aider_chat as scoring
from ._index.aider_chat import HEADER
from .base import Adapter, AdapterEvent, Detection
from .registry import register

TOKENS = re.compile(r"^> Tokens: ")
TOKEN_FIGURE = re.compile(
    r"(?P<number>\d[\d,]*(?:\.\d+)?)(?P<unit>[kKmM]?) "
    r"(?P<what>sent|cache write|cache hit|cached|received)"
)
COST = re.compile(
    r"\$(?P<message>\d+(?:\.\d+)?) (?:message|request), \$(?P<session>\d+(?:\.\d+)?) session"
)
MODEL = re.compile(r"^> (?:Main model|Model|Models): (?P<model>\S+)")
VERSION = re.compile(r"^> Aider (?P<version>v\S+)")
APPLIED = re.compile(r"^> Applied edit to (?P<path>.+?)\s*$")
COMMIT = re.compile(r"^> Commit (?P<sha>[0-9a-f]{7,40}) (?P<message>.+?)\s*$")
SENDING_COMMANDS = ("/ask", "/code", "/architect", "/help")
CLEARING_COMMANDS = ("/clear", "/reset")


def _figure(number: str, unit: str) -> int:
    value = float(number.replace(",", ""))
    scale = {"k": 1_000, "m": 1_000_000}.get(unit.lower(), 1)
    return round(value * scale)


def _strip_break(line: str) -> str:
    return line[:-2] if line.endswith("  ") else line.rstrip()


@dataclass
class _Run:
    index: int
    started: str | None = None
    version: str | None = None
    model: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    cleared: bool = False


@register
class AiderChatAdapter(Adapter):
    name = "aider-chat"
    label = "aider chat history (.aider.chat.history.md)"
    where = (
        "The .aider.chat.history.md file aider writes in the root of the repository it "
        "works on (or the file named by --chat-history-file)."
    )
    markers = ("# aider chat started at", "#### ", "> Tokens:")
    reads_text = True

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self.run = _Run(0)
        self.runs = 0
        self.calls = 0
        self.inputs = 0
        self.previous_line = 0
        self.user_lines: list[str] = []
        self.user_line = 0
        self.reply_lines: list[str] = []
        self.reply_line = 0
        self.last_call: dict[str, Any] | None = None
        self.pending: Exchange | None = None
        """The last call, held until its `Applied edit` and `Commit` lines are read."""
        self.pending_extra: dict[str, Any] | None = None

    normalize = staticmethod(normalize_message)

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        line = record.value
        number = record.line
        gap = number - self.previous_line - 1
        self.previous_line = number
        if not isinstance(line, str):
            yield LineError(number, "not a text line (aider's chat history is Markdown text)")
            return
        header = HEADER.match(line)
        if header:
            yield from self._end_input()
            yield from self._end_reply()
            yield from self._flush()
            self.runs += 1
            self.run = _Run(self.runs, started=header.group("time"), model=self.run.model)
            return
        if line.startswith("####"):
            yield from self._end_reply()
            yield from self._flush()
            if gap:  # a blank line ends an input (aider writes its blank lines as "####")
                yield from self._end_input()
            if not self.user_lines:
                self.user_line = number
            text = line[4:]
            self.user_lines.append(_strip_break(text[1:] if text.startswith(" ") else text))
            return
        yield from self._end_input()
        if line == ">" or line.startswith("> "):
            yield from self._aider_line(line, number)
            return
        if not self.reply_lines:
            self.reply_line = number
            yield from self._flush()  # a new reply: the last call's edits are all seen
        else:
            self.reply_lines.extend([""] * gap)
        self.reply_lines.append(line)

    def _flush(self) -> Iterator[AdapterEvent]:
        if self.pending is not None:
            yield self.pending
            self.pending = None
            self.pending_extra = None

    def _aider_line(self, line: str, number: int) -> Iterator[AdapterEvent]:
        text = _strip_break(line)
        if TOKENS.match(text):
            yield from self._flush()
            yield from self._call(text, number)
            return
        model = MODEL.match(text)
        if model:
            self.run.model = model.group("model").rstrip("⚡")
            return
        version = VERSION.match(text)
        if version:
            self.run.version = version.group("version")
            return
        extra = self.pending_extra
        if self.pending is None or extra is None:
            return
        applied = APPLIED.match(text)
        if applied:
            extra.setdefault("applied_edits", []).append(applied.group("path"))
            return
        commit = COMMIT.match(text)
        if commit:
            extra.setdefault("commits", []).append(
                {"sha": commit.group("sha"), "message": commit.group("message")}
            )

    def _end_input(self) -> Iterator[AdapterEvent]:
        """The user's input is complete: a message of the transcript, unless a command."""
        if not self.user_lines:
            return iter(())
        text = "\n".join(self.user_lines).strip("\n")
        self.user_lines = []
        self.inputs += 1
        command = text.split(None, 1)[0] if text.startswith("/") else None
        if command is not None:
            if command in CLEARING_COMMANDS:
                self.run.messages = []
                self.run.cleared = True
            if command not in SENDING_COMMANDS:
                return iter(())
            text = text[len(command) :].strip()
        self.run.messages.append({"role": "user", "content": text})
        return iter(())

    def _end_reply(self) -> Iterator[AdapterEvent]:
        """A reply ended with no Tokens line: no call, but aider keeps it in the chat."""
        if self.reply_lines:
            self.run.messages.append({"role": "assistant", "content": self._reply_text()})
        return iter(())

    def _reply_text(self) -> str:
        text = "\n".join(self.reply_lines).strip("\n")
        self.reply_lines = []
        return text

    def _call(self, tokens_line: str, number: int) -> Iterator[AdapterEvent]:
        figures: dict[str, int] = {}
        for match in TOKEN_FIGURE.finditer(tokens_line):
            what = "cache hit" if match.group("what") == "cached" else match.group("what")
            figures[what] = _figure(match.group("number"), match.group("unit"))
        if "sent" not in figures or "received" not in figures:
            yield LineError(number, "an aider 'Tokens:' line without 'sent' and 'received' figures")
            return
        run = self.run
        request = TranscriptView(run.messages, len(run.messages))
        reply = {"role": "assistant", "content": self._reply_text()}
        line = self.reply_line or number
        self.reply_line = 0
        cache_read = figures.get("cache hit", 0)
        cache_write = figures.get("cache write", 0)
        usage = Usage(
            input_tokens=max(0, figures["sent"] - cache_read - cache_write),
            output_tokens=figures["received"],
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
        )
        extra: dict[str, Any] = {
            "run": {"index": run.index, "started": run.started, "aider_version": run.version},
            "aider_tokens": tokens_line.removeprefix("> ").strip(),
            "tokens_line": number,
        }
        cost = COST.search(tokens_line)
        if cost:
            extra["cost_usd"] = float(cost.group("message"))
            extra["session_cost_usd"] = float(cost.group("session"))
        if run.cleared:
            extra["chat_cleared"] = True
            run.cleared = False
        if self.calls == 0:
            extra["agent_session"] = {"agent": "aider"}
        self.calls += 1
        run.messages.append(reply)
        label = f"run {run.index}" + (f" ({run.started})" if run.started else "")
        self.pending = Exchange(
            line=line,
            messages=request,
            normalize=normalize_message,
            model=run.model,
            response=normalize_message(reply),
            response_raw=reply,
            usage=usage,
            extra=extra,
            loop_key=f"run-{run.index}",
            loop_label=label,
            tokens_estimated=True,
        )
        self.pending_extra = extra

    def close(self) -> Iterator[AdapterEvent]:
        yield from self._end_input()
        yield from self._end_reply()
        yield from self._flush()

    def no_call_notice(self) -> str | None:
        if self.calls:
            return None
        runs = self.runs or (1 if self.inputs else 0)
        return (
            f"Read as aider's chat history (aider-chat): {runs} run(s) of aider and "
            f"{self.inputs} input(s), but no model reply (aider prints a '> Tokens:' line "
            "after each one): every run was interrupted or only ran commands. Upload a "
            "history in which aider answered."
        )
