# Two commands: `make serve` and `make test` (CI's command, the whole suite). Both set up
# .venv on a fresh clone. `make check` is the quick loop while editing (under 20 s).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The forward proxy's mitmdump, in its own environment: mitmproxy 11.0.2 (the last for
# Python 3.11) pins asgiref and cryptography below what channels and daphne need.
FORWARD := .venv-forward
FORWARD_STAMP := $(FORWARD)/.installed-11.0.2
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: serve test check setup forward migrate lint format bench screenshots clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(FORWARD_STAMP):
	$(PYTHON) -m venv $(FORWARD)
	$(FORWARD)/bin/pip install --quiet 'mitmproxy==11.0.2'
	touch $(FORWARD_STAMP)

setup: $(STAMP)

# `make forward`: the forward proxy's mitmdump (`make test` sets it up for its tests).
forward: $(FORWARD_STAMP)

migrate: setup
	$(BIN)/python manage.py migrate --noinput

serve: migrate
	$(BIN)/python manage.py load_sample
	$(BIN)/daphne -b $(HOST) -p $(PORT) inspector.asgi:application

test: setup $(FORWARD_STAMP)
	$(BIN)/python tests/browser_setup.py
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python scripts/check_module_state.py
	$(BIN)/mypy
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Lint, import contracts, types and the core's unit tests: no browser, no corpus, no web,
# none marked slow (bombs and long property runs: `make test` runs them).
check: setup
	@start=$$(date +%s%N); \
	$(BIN)/ruff check . && \
	$(BIN)/ruff format --check . && \
	$(BIN)/lint-imports && \
	$(BIN)/python scripts/check_module_state.py && \
	$(BIN)/mypy && \
	$(BIN)/python -m pytest -q tests/core -m "not corpus and not browser and not slow" $(PYTEST_ARGS); \
	status=$$?; \
	echo "make check: $$(( ($$(date +%s%N) - start) / 1000000 )) ms"; \
	exit $$status

lint: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: setup
	$(BIN)/python bench/ingest.py

screenshots: setup
	$(BIN)/python scripts/screenshots.py

clean:
	rm -rf $(VENV) $(FORWARD) db.sqlite3 .pytest_cache
