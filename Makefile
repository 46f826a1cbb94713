# Two set-up commands: `make demo` and `make test`. Both create (or reuse) .venv and
# install what they need first, the offline model included.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
QUESTION ?= Who designed the Eiffel Tower, and why was it built?

.PHONY: install demo test bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/deepresearch "$(QUESTION)" --mode iterative

test: $(STAMP)
	@. scripts/postgres.sh && start_test_postgres; \
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache
