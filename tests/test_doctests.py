"""The ``>>>`` examples in the package's docstrings and in the documentation pages are run.

Every module under ``replica/`` whose source contains ``>>>`` is imported and run through
:mod:`doctest` (ELLIPSIS and NORMALIZE_WHITESPACE); only those modules are imported, so the
collection costs a few seconds, not an import of the whole package. The Markdown pages of
``docs/`` are parsed the same way (each page one doctest, its examples in order). A new example
is picked up without editing this file.
"""

from __future__ import annotations

import doctest
import importlib
import re
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "replica"
DOCS_DIR = PACKAGE_DIR.parent / "docs"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def modules_with_examples(package_dir: Path = PACKAGE_DIR) -> list[str]:
    """Dotted names of the package's modules whose source holds a ``>>>`` line."""
    names = []
    for path in sorted(package_dir.rglob("*.py")):
        if path.name == "__main__.py" or ">>>" not in path.read_text(encoding="utf-8"):
            continue
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


MODULES = modules_with_examples()


def test_the_examples_are_found():
    # the facade, exact parsing, the precision helpers, the saddle point and the simulations
    assert {"replica", "replica.params", "replica.numerics.precision",
            "replica.symbolic.saddle", "replica.simulate"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    tests = [t for t in finder.find(module, name) if t.examples]
    # every module listed holds examples that doctest finds (none hidden in a place it skips)
    assert tests, f"{name}: '>>>' in the source but no example found by doctest"
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"


PAGES = sorted(p.name for p in DOCS_DIR.glob("*.md") if ">>>" in p.read_text(encoding="utf-8"))


def test_the_pages_with_examples_are_found():
    assert "getting_started.md" in PAGES


@pytest.mark.parametrize("page", PAGES)
def test_documentation_page_examples(page):
    # the Python code blocks of the page, each ended by a blank line (a closing fence is not
    # expected output)
    blocks = re.findall(r"```python\n(.*?)```", (DOCS_DIR / page).read_text(encoding="utf-8"),
                        flags=re.S)
    text = "\n\n".join(blocks)
    test = doctest.DocTestParser().get_doctest(text, {}, page, str(DOCS_DIR / page), 0)
    assert test.examples
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{page}: {result.failed} of {result.attempted} examples failed"
