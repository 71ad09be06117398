# The two commands a newcomer needs:
#   make run   — the app on the embedded default (SQLite, no broker server, offline model)
#   make test  — ruff, mypy and the pytest suite (PostgreSQL and Redis when
#                DATABASE_URL and REDIS_URL point at them)

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
# `make run PROVIDER=openai [MODEL=gpt-5]` answers with that provider's model (its
# key in the environment); the choice stays until another is made.
PROVIDER ?=
MODEL ?=

.PHONY: run test lint bench bench-reference screenshots

$(VENV)/.installed: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $@

run: $(VENV)/.installed
	DEBUG=$${DEBUG:-1} $(BIN)/python manage.py migrate --noinput
	DEBUG=$${DEBUG:-1} $(BIN)/python manage.py seed_demo --site-origin http://localhost:$(PORT) \
		$(if $(PROVIDER),--provider $(PROVIDER)) $(if $(MODEL),--model $(MODEL))
	DEBUG=$${DEBUG:-1} $(BIN)/python manage.py serve --host $(HOST) --port $(PORT)

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	DEBUG=1 $(BIN)/mypy

test: lint
	$(BIN)/pytest

# The README's pictures (docs/images/), taken from the app as `make run` starts it.
screenshots: $(VENV)/.installed-dev
	$(BIN)/python docs/screenshots.py

BENCH_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/gymnasia_bench

bench: $(VENV)/.installed-dev
	DEBUG=1 $(BIN)/python tests/bench/bench_dispatch.py
	DEBUG=1 $(BIN)/python tests/bench/bench_dispatch.py --database $(BENCH_DATABASE_URL)
	$(BIN)/python tests/bench/bench_tool_calls.py
	DEBUG=1 $(BIN)/python tests/bench/bench_prompt_cache.py
	$(BIN)/python tests/bench/bench_turns.py --rounds 3
	$(BIN)/python tests/bench/bench_turns.py --rounds 3 --database $(BENCH_DATABASE_URL)_turns
	$(BIN)/python tests/bench/bench_inbox.py
	$(BIN)/python tests/bench/bench_inbox.py --database $(BENCH_DATABASE_URL)_inbox
	DEBUG=1 $(BIN)/python tests/bench/bench_mindbody_calls.py
	$(BIN)/python tests/bench/bench_approval_latency.py --database $(BENCH_DATABASE_URL)_approvals
	$(BIN)/python tests/bench/bench_notice_latency.py --database $(BENCH_DATABASE_URL)_notices
	$(BIN)/python tests/bench/bench_panel.py --database $(BENCH_DATABASE_URL)_panel

# Two open-source agent harnesses beside ours, in turns: the per-call target is set
# beside what such harnesses spend. Not the project's dependencies: a virtual
# environment of their own, pinned to the OpenAI SDK version of requirements.txt.
REFERENCE_VENV := var/reference-venv

$(REFERENCE_VENV)/.installed:
	test -x $(REFERENCE_VENV)/bin/python || $(PYTHON) -m venv $(REFERENCE_VENV)
	$(REFERENCE_VENV)/bin/python -m pip install --quiet openai-agents==0.24.0 \
		"pydantic-ai-slim[openai]==2.68.0" openai==3.57.0 uvloop==0.23.0
	touch $@

bench-reference: $(VENV)/.installed-dev $(REFERENCE_VENV)/.installed
	for round in 1 2 3; do \
		$(BIN)/python tests/bench/bench_tool_calls.py --repeats 7 \
			--database $(BENCH_DATABASE_URL) && \
		$(REFERENCE_VENV)/bin/python tests/bench/bench_reference_harnesses.py \
			|| exit 1; \
	done
