# replica: quick start is `make demo` and `make test`; both create .venv on first use.
# `make notebooks` writes the figure notebooks as executed .ipynb files into out/notebooks
# (quick mode; `make notebooks NOTEBOOK_FLAGS=` for the papers' sizes).
# `make docs` builds the documentation site (warnings are errors); `make gallery` first draws
# the notebooks' figures (quick mode) into docs/_gallery for its gallery page.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

NOTEBOOK_FLAGS ?= --quick

.PHONY: demo test test-fast bench notebooks docs gallery clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,docs,fast]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m replica.demo --out out

# the full tier (CI): every test, on two processes (pytest-xdist), each test module on one of
# them (--dist loadscope: a module-scoped fixture -- the quick demo, a compiled kernel -- runs
# once, not once per worker); the 30 slowest are listed at the end, so the suite's time can be
# watched run by run
test: $(STAMP)
	$(PY) -m pytest -q -n 2 --dist loadscope --durations=30

# the development tier: every test not marked slow (demo, notebooks, PDFs, proofs, derivation
# checks, simulations against the theory, the fuzzing campaigns and tests over ~1 s run in
# `make test` and CI), on two processes (pytest-xdist): about 880 tests in about 2.5 minutes on 2 cores
test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow" -n 2 --dist loadscope

notebooks: $(STAMP)
	$(PY) notebooks/_execute.py --out out/notebooks $(NOTEBOOK_FLAGS)

bench: $(STAMP)
	$(PY) -m benchmarks

docs: $(STAMP)
	$(PY) -m sphinx -b html -n -W --keep-going -q docs docs/_build/html
	@echo "documentation: docs/_build/html/index.html"

gallery: $(STAMP)
	mkdir -p docs/_gallery
	for f in notebooks/[a-z]*.py; do MPLBACKEND=Agg $(PY) $$f --quick --out docs/_gallery || exit 1; done
	$(MAKE) docs

clean:
	rm -rf $(VENV) out .pytest_cache docs/_build docs/_gallery
