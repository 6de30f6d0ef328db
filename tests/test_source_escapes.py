"""Every Python source of the package, its examples, benchmarks and tests compiles with warnings
as errors: an invalid escape sequence in a string (``"\\Phi"`` in a docstring that is not a raw
string) is a DeprecationWarning today (a SyntaxWarning in newer Pythons, an error later) and
prints at the import of the module, in a user's session."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("replica", "examples", "benchmarks", "tests", "notebooks", "derivations", "studies")


def _sources():
    for folder in FOLDERS:
        yield from sorted((ROOT / folder).rglob("*.py"))


@pytest.mark.slow
def test_every_source_compiles_without_a_warning():
    bad = []
    for path in _sources():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                compile(path.read_text(encoding="utf-8"), str(path), "exec")
            except (SyntaxError, DeprecationWarning, SyntaxWarning) as exc:
                bad.append(f"{path.relative_to(ROOT)}: {exc}")
    assert not bad, "\n".join(bad)
