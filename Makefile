# replica: quick start is `make demo` and `make test`; both create .venv on first use.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test bench clean venv

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

bench: $(STAMP)
	$(PY) -m benchmarks

clean:
	rm -rf $(VENV) out .pytest_cache
