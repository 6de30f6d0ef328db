# replica: quick start is `make demo` and `make test`; both create .venv on first use.
# `make notebooks` writes the figure notebooks as executed .ipynb files into out/notebooks
# (quick mode; `make notebooks NOTEBOOK_FLAGS=` for the papers' sizes).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

NOTEBOOK_FLAGS ?= --quick

.PHONY: demo test bench notebooks clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m replica.demo --out out

test: $(STAMP)
	$(PY) -m pytest -q

notebooks: $(STAMP)
	$(PY) notebooks/_execute.py --out out/notebooks $(NOTEBOOK_FLAGS)

bench: $(STAMP)
	$(PY) -m benchmarks

clean:
	rm -rf $(VENV) out .pytest_cache
