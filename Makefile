# Evidentia — the two set-up commands are `make run` and `make test`.
SHELL := /bin/bash
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
SHARED ?= $(abspath ../shared)
export EVIDENTIA_KB_MIRROR_DIR ?= $(SHARED)/kb-data
export EVIDENTIA_EVAL_DATA_DIR ?= $(SHARED)/eval-data
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1

.PHONY: run test install install-test browser model server-up unit bench clean-server

$(BIN)/evidentia: pyproject.toml
	@command -v $(PY) >/dev/null || { echo "Python 3.11 is required ($(PY) not found)"; exit 1; }
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first, pinned: the CPU wheel on disk, not several GB of CUDA packages
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[test]'
	touch $(BIN)/evidentia

install: $(BIN)/evidentia

# Command 1: install, provision the model, build the default KB, start vLLM and the UI.
run: install
	$(BIN)/evidentia run

# Command 2: the test suite, with the real served model (started here if none runs).
test: install browser model
	bash .ci/test.sh

browser:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

model: install
	$(BIN)/evidentia model install

unit: install
	$(BIN)/python -m pytest -q -m "not real_model and not browser"

# Every benchmark with its defaults (none needs an argument). bench_llm starts its own model server, so the
# model is installed first; bench_chat needs a served model and the default text KB (`make run` sets both up):
# without them it is skipped with a message instead of failing the whole run.
CHAT_READY := import sys, httpx; from assistant.settings import Settings; s = Settings(); \
	ok = (s.kb_dir / "text" / "text.db").exists() and httpx.get(s.effective_base_url + "/models", timeout=5).is_success; \
	sys.exit(0 if ok else 1)
bench: install model
	@for b in tests/bench/bench_*.py; do \
	  if [ "$$b" = tests/bench/bench_chat.py ] && ! $(BIN)/python -c '$(CHAT_READY)' 2>/dev/null; then \
	    echo "== $$b skipped: needs a served model and the default text KB (start them with 'make run')"; continue; fi; \
	  echo "== $$b"; $(BIN)/python $$b || exit 1; \
	done
