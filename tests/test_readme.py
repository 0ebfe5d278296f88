"""The README lists every supported format and the two commands on its first screen."""

from pathlib import Path

from traces.core.reading.formats.registry import adapters

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_every_format_is_listed_with_where_to_find_it():
    for adapter in adapters():
        assert f"`{adapter.name}`" in README, f"README does not list {adapter.name}"
        assert adapter.where, f"{adapter.name} does not say where users find its files"


def test_first_screen_says_make_serve_and_make_test():
    first_screen = "\n".join(README.splitlines()[:15])
    assert "make serve" in first_screen and "make test" in first_screen
