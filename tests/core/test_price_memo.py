"""The price memo: what genai-prices answered, kept on disk so a later process prices the
same models without importing it, and the same prices as the library's own.

The processes here are real `loop-inspector` commands (`inspector.cli.main`) in fresh
interpreters, each with its own memo folder; the schedules are checked against the real
library for every model it has.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from genai_prices import data_snapshot
from genai_prices import types as gp

from tests.core.long_session import make_session
from tests.core.test_library_prices import dated_calls
from traces.core.analysis import price_memo
from traces.core.analysis.library_prices import _price, schedule_of
from traces.core.analysis.price_memo import PriceMemo, Schedule, file_name, library_identity

ROOT = Path(__file__).resolve().parent.parent.parent
IDENTITY = library_identity()
assert IDENTITY is not None
FILE_NAME = file_name(IDENTITY)
PROBE = (
    "import sys\nfrom inspector.cli import main\nstatus = main(sys.argv[1:])\n"
    "print('genai_prices' in sys.modules, file=sys.stderr)\nsys.exit(status)\n"
)


def run(memo_folder: Path | str, *command: str) -> bool:
    """Run `loop-inspector COMMAND` in a fresh process with this memo folder ("" = off);
    True when it imported genai-prices."""
    env = {**os.environ, "LOOP_INSPECTOR_CACHE_DIR": str(memo_folder)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stderr.strip().splitlines()[-1] == "True"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("memo") / "session.jsonl"
    path.write_bytes(make_session(60, parallel=False))
    return path


def test_a_second_report_is_priced_from_the_memo_without_the_library_and_reads_the_same(
    session, tmp_path
):
    memo = tmp_path / "memo"
    without, first, second = (tmp_path / f"{name}.html" for name in ("off", "first", "second"))
    assert run("", "report", str(session), "--html", str(without))
    assert run(memo, "report", str(session), "--html", str(first))  # asks, then remembers
    assert (memo / FILE_NAME).is_file()
    assert not run(memo, "report", str(session), "--html", str(second))
    assert "$" in second.read_text(encoding="utf-8")  # priced
    assert first.read_bytes() == second.read_bytes() == without.read_bytes()


def test_the_memo_of_another_copy_of_the_library_is_not_read(session, tmp_path):
    memo = tmp_path / "memo"
    assert run(memo, "analyze", str(session))
    saved = orjson.loads((memo / FILE_NAME).read_bytes())
    saved["library"][1] += 1  # another data file: another version of genai-prices
    (memo / FILE_NAME).write_bytes(orjson.dumps(saved))
    assert run(memo, "analyze", str(session))
    assert not run(memo, "analyze", str(session))  # written anew for this copy


@pytest.mark.parametrize("damage", [b"", b"{not json", b"[]", b'{"format": 1}'])
def test_a_damaged_memo_is_ignored_and_the_library_asked(session, tmp_path, damage):
    memo = tmp_path / "memo"
    memo.mkdir()
    (memo / FILE_NAME).write_bytes(damage)
    out, plain = tmp_path / "out.html", tmp_path / "plain.html"
    assert run(memo, "report", str(session), "--html", str(out))
    run("", "report", str(session), "--html", str(plain))
    assert out.read_bytes() == plain.read_bytes()


def test_the_memo_turned_off_writes_nothing_and_keeps_asking(session, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert run("", "analyze", str(session))
    assert run("", "analyze", str(session))
    assert not (tmp_path / ".cache").exists()


def test_a_model_the_library_does_not_know_is_remembered_as_unknown(tmp_path):
    trace = tmp_path / "unknown.jsonl"
    trace.write_bytes(dated_calls("acme-frontier-9", datetime(2026, 3, 1, tzinfo=UTC).timestamp()))
    memo = tmp_path / "memo"
    assert run(memo, "analyze", str(trace))
    assert not run(memo, "analyze", str(trace))  # "not a model it knows" is an answer too


def test_off_peak_prices_are_not_kept_so_the_library_prices_each_time(tmp_path):
    """DeepSeek's prices change by time of day: the other side of the memo."""
    night = datetime(2026, 5, 1, 3, tzinfo=UTC).timestamp()
    trace = tmp_path / "deepseek.jsonl"
    trace.write_bytes(dated_calls("deepseek-chat", night, night + 17 * 3600))
    memo = tmp_path / "memo"
    assert run(memo, "analyze", str(trace))
    assert run(memo, "analyze", str(trace))


def _date_only_models() -> list[gp.ModelInfo]:
    return [
        model
        for provider in data_snapshot.get_snapshot().providers
        for model in provider.models
        if schedule_of(model) is not None
    ]


def test_every_date_priced_model_of_the_library_has_a_schedule_that_prices_like_it():
    """Each model's schedule against the library's own `get_prices`, on each start day, the
    day before it, a day long ago and today: the memo answers what the library would."""
    models = _date_only_models()
    assert len(models) > 500  # the library's models, not a few
    for model in models:
        schedule = schedule_of(model)
        assert schedule is not None
        starts = {
            c.constraint.start_date
            for c in (model.prices if isinstance(model.prices, list) else ())
            if isinstance(c.constraint, gp.StartDateConstraint)
        }
        days = {date(2000, 1, 1), datetime.now(UTC).date()}
        days |= starts | {start - timedelta(days=1) for start in starts}
        for day in days:
            noon = datetime(day.year, day.month, day.day, 12, tzinfo=UTC)
            expected = _price(model.get_prices(noon))
            assert schedule.on_day((day - date(1970, 1, 1)).days) == expected, (model.id, day)
        assert Schedule.from_json(orjson.loads(orjson.dumps(schedule.as_json()))) == schedule


def test_a_memo_reads_back_what_it_remembered_and_a_new_process_sees_it(tmp_path):
    identity = library_identity()
    assert identity is not None and identity[0].endswith("data.py")
    assert identity[0] == os.path.realpath(identity[0])  # one memo whichever path led there
    memo = PriceMemo(str(tmp_path), identity)
    model = next(m for m in _date_only_models() if isinstance(m.prices, list))
    schedule = schedule_of(model)
    assert schedule is not None
    memo.remember("some-model", (model.id, schedule))
    memo.remember("nothing-known", None)
    memo.remember_described("taken", "source")
    again = PriceMemo(str(tmp_path), identity)
    assert again.answer("some-model") == (model.id, schedule)
    assert again.knows("nothing-known") and again.answer("nothing-known") is None
    assert not again.knows("never-asked")
    assert again.described() == ("taken", "source")
    assert PriceMemo(str(tmp_path), [*identity[:2], 0]).described() is None  # another copy


def test_the_memo_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("LOOP_INSPECTOR_CACHE_DIR", str(tmp_path / "here"))
    assert price_memo.folder() == str(tmp_path / "here")
    monkeypatch.setenv("LOOP_INSPECTOR_CACHE_DIR", "")
    assert price_memo.folder() is None
    monkeypatch.delenv("LOOP_INSPECTOR_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert price_memo.folder() == str(tmp_path / "xdg" / "loop-inspector")


def test_a_name_too_long_to_keep_and_names_past_the_limit_are_asked_not_kept(tmp_path):
    """Trace text names the models: a hostile trace cannot grow the file without bound."""
    identity = library_identity()
    memo = PriceMemo(str(tmp_path), identity)
    memo.remember("x" * (price_memo.MAX_KEY + 1), None)
    assert not memo.knows("x" * (price_memo.MAX_KEY + 1))
    for number in range(price_memo.MAX_NAMES + 5):
        memo.remember(f"junk-{number}", None)
    again = PriceMemo(str(tmp_path), identity)
    assert again.knows("junk-0") and not again.knows(f"junk-{price_memo.MAX_NAMES}")


GOOD_PRICE = [3.0, 15.0, 3.75, 0.3, None, []]


@pytest.mark.parametrize(
    "entry",
    [
        {"a": 1},
        "text",
        [1],
        ["id", [[None, [1, 2]]]],
        7,
        ["id", []],  # no price at all: nothing to pick on any day
        ["id", [["abc", GOOD_PRICE]]],  # a start that is not a day number
        ["id", [[True, GOOD_PRICE]]],
        ["id", [[None, [3.0, 15.0, 3.75, 0.3, None, [["many", GOOD_PRICE]]]]]],
    ],
)
def test_a_damaged_entry_is_forgotten_and_asked_again(tmp_path, entry):
    identity = library_identity()
    memo = PriceMemo(str(tmp_path), identity)
    memo.remember("model", None)
    saved_path = tmp_path / file_name(identity)
    saved = orjson.loads(saved_path.read_bytes())
    saved["names"]["model"] = entry
    saved_path.write_bytes(orjson.dumps(saved))
    again = PriceMemo(str(tmp_path), identity)
    assert again.knows("model")
    with pytest.raises(LookupError):
        again.answer("model")
    assert not again.knows("model")


@pytest.mark.parametrize("described", [{"a": 1, "b": 2}, [1, 2], ["only one"], "ab"])
def test_a_damaged_description_makes_the_whole_memo_ignored(tmp_path, described):
    identity = library_identity()
    memo = PriceMemo(str(tmp_path), identity)
    memo.remember("model", None)
    saved_path = tmp_path / file_name(identity)
    saved = orjson.loads(saved_path.read_bytes())
    saved["described"] = described
    saved_path.write_bytes(orjson.dumps(saved))
    again = PriceMemo(str(tmp_path), identity)
    assert again.described() is None and not again.knows("model")


def test_a_memo_file_too_large_to_be_ours_is_ignored(tmp_path):
    identity = library_identity()
    memo = PriceMemo(str(tmp_path), identity)
    memo.remember("model", None)
    saved_path = tmp_path / file_name(identity)
    saved = orjson.loads(saved_path.read_bytes())
    saved["padding"] = "x" * price_memo.MAX_FILE_BYTES
    saved_path.write_bytes(orjson.dumps(saved))
    assert not PriceMemo(str(tmp_path), identity).knows("model")


def test_writing_never_follows_a_planted_file_of_a_guessable_name(tmp_path):
    """The memo is written under a fresh O_EXCL name, then renamed over: a symlink planted
    where the old `<memo>.<pid>.tmp` name would be is left alone, its target untouched."""
    identity = library_identity()
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep me")
    memo_path = tmp_path / file_name(identity)
    os.symlink(victim, f"{memo_path}.{os.getpid()}.tmp")
    PriceMemo(str(tmp_path), identity).remember("model", None)
    assert victim.read_bytes() == b"keep me"
    assert PriceMemo(str(tmp_path), identity).knows("model")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".price-memo-")]
